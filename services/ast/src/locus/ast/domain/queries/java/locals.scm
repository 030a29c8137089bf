; Variables whose type is written, so a call on one is a method of that type: parameters,
; locals (`var x = new Foo()` by what it creates) and fields.
(formal_parameter
  type: (_) @local.type
  name: (identifier) @local.name)

(local_variable_declaration
  type: (_) @local.type
  declarator: (variable_declarator
    name: (identifier) @local.name))

(local_variable_declaration
  declarator: (variable_declarator
    name: (identifier) @local.name
    value: (object_creation_expression
      type: (_) @local.type)))

(field_declaration
  type: (_) @local.type
  declarator: (variable_declarator
    name: (identifier) @local.name))

; for (Item item : items); catch (ParseException e); try (Reader r = open())
(enhanced_for_statement
  type: (_) @local.type
  name: (identifier) @local.name)

(catch_formal_parameter
  (catch_type) @local.type
  name: (identifier) @local.name)

(resource
  type: (_) @local.type
  name: (identifier) @local.name)
