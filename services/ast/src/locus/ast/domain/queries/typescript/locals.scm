; Variables whose type is written, so a call on one is a method of that type: parameters
; (`client: ApiClient`, `opts?: api.Options`), `let t: Tokenizer`, `const s = new Server()`.
(required_parameter
  pattern: (identifier) @local.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)] @local.type))

(optional_parameter
  pattern: (identifier) @local.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)] @local.type))

(variable_declarator
  name: (identifier) @local.name
  type: (type_annotation [(type_identifier) (nested_type_identifier)] @local.type))

(variable_declarator
  name: (identifier) @local.name
  value: (new_expression
    constructor: [(identifier) (member_expression)] @local.type))
