; f(), ns::f(), Foo::bar(), f<T>(), obj.m(), ptr->m(), this->m(): the callee as written.
(call_expression
  function: [
    (identifier)
    (qualified_identifier)
    (template_function)
    (field_expression)
  ] @call.target)
