; Variables whose type is written, so a call on one is a method of that type: parameters,
; class parameters (`class Str(errorMode: ErrorMode)`) and `val x: Parser = ...`.
(parameter
  name: (identifier) @local.name
  type: (type_identifier) @local.type)

(class_parameter
  name: (identifier) @local.name
  type: (type_identifier) @local.type)

(val_definition
  pattern: (identifier) @local.name
  type: (type_identifier) @local.type)

(var_definition
  pattern: (identifier) @local.name
  type: (type_identifier) @local.type)
