; f(x), s->fn(x), s.fn(x): the callee as written (field calls stay unresolved).
(call_expression
  function: [
    (identifier)
    (field_expression)
  ] @call.target)
