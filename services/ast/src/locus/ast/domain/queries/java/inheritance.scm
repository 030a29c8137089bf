; class A extends Base<T> implements Payable, Comparable<A>; enums and records implementing
; interfaces; interfaces extending interfaces. Type arguments are not part of the base.
(class_declaration
  (superclass
    [(type_identifier) (scoped_type_identifier)] @inherits.base)) @inherits.class

(class_declaration
  (superclass
    (generic_type
      [(type_identifier) (scoped_type_identifier)] @inherits.base))) @inherits.class

(class_declaration
  (super_interfaces
    (type_list
      [(type_identifier) (scoped_type_identifier)] @inherits.base))) @inherits.class

(class_declaration
  (super_interfaces
    (type_list
      (generic_type
        [(type_identifier) (scoped_type_identifier)] @inherits.base)))) @inherits.class

(enum_declaration
  (super_interfaces
    (type_list
      [(type_identifier) (scoped_type_identifier)] @inherits.base))) @inherits.class

(enum_declaration
  (super_interfaces
    (type_list
      (generic_type
        [(type_identifier) (scoped_type_identifier)] @inherits.base)))) @inherits.class

(record_declaration
  (super_interfaces
    (type_list
      [(type_identifier) (scoped_type_identifier)] @inherits.base))) @inherits.class

(record_declaration
  (super_interfaces
    (type_list
      (generic_type
        [(type_identifier) (scoped_type_identifier)] @inherits.base)))) @inherits.class

(interface_declaration
  (extends_interfaces
    (type_list
      [(type_identifier) (scoped_type_identifier)] @inherits.base))) @inherits.class

(interface_declaration
  (extends_interfaces
    (type_list
      (generic_type
        [(type_identifier) (scoped_type_identifier)] @inherits.base)))) @inherits.class
