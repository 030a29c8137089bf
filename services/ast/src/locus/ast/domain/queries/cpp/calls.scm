; f(), ns::f(), Foo::bar(), f<T>(), obj.m(), ptr->m(), this->m(): the callee as written. A cast
; (`static_cast<T>(x)`, which tree-sitter reads as a template function's call) calls nothing.
(call_expression
  function: [
    (identifier)
    (qualified_identifier)
    (template_function)
    (field_expression)
  ] @call.target
  (#not-match? @call.target "^(static|dynamic|reinterpret|const)_cast\\s*<"))
