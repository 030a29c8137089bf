; class A extends B<T> implements I, ns.J<T>: each base by its name, type arguments dropped.
(class_declaration
  (class_heritage
    (extends_clause
      value: [(identifier) (member_expression)] @inherits.base))) @inherits.class

(abstract_class_declaration
  (class_heritage
    (extends_clause
      value: [(identifier) (member_expression)] @inherits.base))) @inherits.class

(variable_declarator
  value: (class
    (class_heritage
      (extends_clause
        value: [(identifier) (member_expression)] @inherits.base)))) @inherits.class

(class_declaration
  (class_heritage
    (implements_clause
      [(type_identifier) (nested_type_identifier)] @inherits.base))) @inherits.class

(class_declaration
  (class_heritage
    (implements_clause
      (generic_type
        name: (_) @inherits.base)))) @inherits.class

(abstract_class_declaration
  (class_heritage
    (implements_clause
      [(type_identifier) (nested_type_identifier)] @inherits.base))) @inherits.class

(abstract_class_declaration
  (class_heritage
    (implements_clause
      (generic_type
        name: (_) @inherits.base)))) @inherits.class

; interface A extends B, C<T>
(interface_declaration
  (extends_type_clause
    type: [(type_identifier) (nested_type_identifier)] @inherits.base)) @inherits.class

(interface_declaration
  (extends_type_clause
    type: (generic_type
      name: (_) @inherits.base))) @inherits.class
