; Struct embedding: a field without a name (`Base`, `*Base`, `io.Reader`, `Base[T]`).
(type_spec
  type: (struct_type
    (field_declaration_list
      (field_declaration
        !name
        type: [(type_identifier) (qualified_type)] @inherits.base)))) @inherits.class

(type_spec
  type: (struct_type
    (field_declaration_list
      (field_declaration
        !name
        type: (generic_type
          type: [(type_identifier) (qualified_type)] @inherits.base))))) @inherits.class

; Interface embedding (`io.Reader` inside an interface); unions (`~int | ~string`) are not.
(type_spec
  type: (interface_type
    (type_elem
      .
      [(type_identifier) (qualified_type)] @inherits.base
      .))) @inherits.class

; The same when the declaration of one type is the definition.
(type_declaration
  (type_spec
    type: (struct_type
      (field_declaration_list
        (field_declaration
          !name
          type: [(type_identifier) (qualified_type)] @inherits.base))))) @inherits.class

(type_declaration
  (type_spec
    type: (struct_type
      (field_declaration_list
        (field_declaration
          !name
          type: (generic_type
            type: [(type_identifier) (qualified_type)] @inherits.base)))))) @inherits.class

(type_declaration
  (type_spec
    type: (interface_type
      (type_elem
        .
        [(type_identifier) (qualified_type)] @inherits.base
        .)))) @inherits.class
