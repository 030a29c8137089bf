; class Invoice : Entity, IInvoice<int> / record Person(string Name) : Base(Name)
(class_declaration
  (base_list
    [(identifier) (qualified_name) (generic_name)] @inherits.base)) @inherits.class

(record_declaration
  (base_list
    [(identifier) (qualified_name) (generic_name)] @inherits.base)) @inherits.class

(record_declaration
  (base_list
    (primary_constructor_base_type
      type: (_) @inherits.base))) @inherits.class

(struct_declaration
  (base_list
    [(identifier) (qualified_name) (generic_name)] @inherits.base)) @inherits.class

(interface_declaration
  (base_list
    [(identifier) (qualified_name) (generic_name)] @inherits.base)) @inherits.class
