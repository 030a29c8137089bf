; class Invoice(id: String) : Base(id), Payable, Comparable<Invoice>; objects alike; interface
; supertypes. Type arguments are not part of the base.
(class_declaration
  (delegation_specifier
    (user_type . (type_identifier) @inherits.base .))) @inherits.class

(class_declaration
  (delegation_specifier
    (user_type . (type_identifier) @inherits.base . (type_arguments)))) @inherits.class

(class_declaration
  (delegation_specifier
    (constructor_invocation
      (user_type . (type_identifier) @inherits.base)))) @inherits.class

(class_declaration
  (delegation_specifier
    (explicit_delegation
      (user_type . (type_identifier) @inherits.base)))) @inherits.class

(object_declaration
  (delegation_specifier
    (user_type . (type_identifier) @inherits.base))) @inherits.class

(object_declaration
  (delegation_specifier
    (constructor_invocation
      (user_type . (type_identifier) @inherits.base)))) @inherits.class
