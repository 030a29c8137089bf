; class A extends B / class A extends ns.B; a call (mixin(B)) is not a base name.
(class_declaration
  (class_heritage
    [(identifier) (member_expression)] @inherits.base)) @inherits.class

(variable_declarator
  value: (class
    (class_heritage
      [(identifier) (member_expression)] @inherits.base))) @inherits.class
