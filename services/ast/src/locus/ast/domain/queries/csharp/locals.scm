; Variables whose type is written, so a call on one is a method of that type: parameters,
; locals and fields (`Invoice invoice`, `List<Line> lines`), `var p = new Parser()`.
(parameter
  type: [(identifier) (qualified_name) (generic_name)] @local.type
  name: (identifier) @local.name)

(variable_declaration
  type: [(identifier) (qualified_name) (generic_name)] @local.type
  (variable_declarator
    name: (identifier) @local.name))

(variable_declaration
  type: (implicit_type)
  (variable_declarator
    name: (identifier) @local.name
    (object_creation_expression
      type: [(identifier) (qualified_name) (generic_name)] @local.type)))

; foreach (Item item in items); catch (ParseError e)
(foreach_statement
  type: [(identifier) (qualified_name) (generic_name)] @local.type
  left: (identifier) @local.name)

(catch_declaration
  type: [(identifier) (qualified_name) (generic_name)] @local.type
  name: (identifier) @local.name)
