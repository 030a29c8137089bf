; class Foo : public Base, private ns::Other<T> {}
(class_specifier
  (base_class_clause
    [
      (type_identifier)
      (qualified_identifier)
      (template_type)
    ] @inherits.base)) @inherits.class

(struct_specifier
  (base_class_clause
    [
      (type_identifier)
      (qualified_identifier)
      (template_type)
    ] @inherits.base)) @inherits.class
