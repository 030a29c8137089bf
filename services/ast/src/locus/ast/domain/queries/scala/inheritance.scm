; extends Base(id) with Payable with Ordered[Invoice]: each type is a base, without its
; type arguments (the `type:` field reaches only the first, so the types are matched as
; children).

(class_definition
  extend: (extends_clause
    [(type_identifier) (stable_type_identifier)] @inherits.base)) @inherits.class

(class_definition
  extend: (extends_clause
    (generic_type
      type: [(type_identifier) (stable_type_identifier)] @inherits.base))) @inherits.class

(object_definition
  extend: (extends_clause
    [(type_identifier) (stable_type_identifier)] @inherits.base)) @inherits.class

(object_definition
  extend: (extends_clause
    (generic_type
      type: [(type_identifier) (stable_type_identifier)] @inherits.base))) @inherits.class

(trait_definition
  extend: (extends_clause
    [(type_identifier) (stable_type_identifier)] @inherits.base)) @inherits.class

(trait_definition
  extend: (extends_clause
    (generic_type
      type: [(type_identifier) (stable_type_identifier)] @inherits.base))) @inherits.class

(enum_definition
  extend: (extends_clause
    [(type_identifier) (stable_type_identifier)] @inherits.base)) @inherits.class

(enum_definition
  extend: (extends_clause
    (generic_type
      type: [(type_identifier) (stable_type_identifier)] @inherits.base))) @inherits.class
