; Variables whose type is written, so a call on one is a method of that type: parameters,
; constructor properties and `val x: Parser = ...` (a nullable `Parser?` is left out).
(parameter
  (simple_identifier) @local.name
  (user_type) @local.type)

(class_parameter
  (simple_identifier) @local.name
  (user_type) @local.type)

(variable_declaration
  (simple_identifier) @local.name
  (user_type) @local.type)
