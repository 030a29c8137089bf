; Variables whose type is written, so a call on one is a method of that type: parameters
; (`cc *ClientConn`), `var s Server`, and `s := &Server{...}` / `s := Server{...}`.
(parameter_declaration
  name: (identifier) @local.name
  type: [(type_identifier) (qualified_type) (pointer_type) (generic_type)] @local.type)

(var_spec
  name: (identifier) @local.name
  type: [(type_identifier) (qualified_type) (pointer_type) (generic_type)] @local.type)

(short_var_declaration
  left: (expression_list . (identifier) @local.name .)
  right: (expression_list .
    (composite_literal
      type: [(type_identifier) (qualified_type) (generic_type)] @local.type) .))

(short_var_declaration
  left: (expression_list . (identifier) @local.name .)
  right: (expression_list .
    (unary_expression
      operand: (composite_literal
        type: [(type_identifier) (qualified_type) (generic_type)] @local.type)) .))
