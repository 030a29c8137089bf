; class A extends B implements C, D; interface I extends J, K; enum E implements I
(class_declaration
  (base_clause [(name) (qualified_name)] @inherits.base)) @inherits.class

(class_declaration
  (class_interface_clause [(name) (qualified_name)] @inherits.base)) @inherits.class

(interface_declaration
  (base_clause [(name) (qualified_name)] @inherits.base)) @inherits.class

(enum_declaration
  (class_interface_clause [(name) (qualified_name)] @inherits.base)) @inherits.class

; use SomeTrait; inside a class or trait body
(class_declaration
  body: (declaration_list
    (use_declaration [(name) (qualified_name)] @inherits.base))) @inherits.class

(trait_declaration
  body: (declaration_list
    (use_declaration [(name) (qualified_name)] @inherits.base))) @inherits.class
