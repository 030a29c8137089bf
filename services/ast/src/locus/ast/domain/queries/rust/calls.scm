; Every call; the callee is kept as written (helper, Invoice::new, self.total, a::b::f).
(call_expression
  function: [(identifier) (scoped_identifier) (field_expression)] @call.target)

; Turbofish: parse::<u32>() calls parse.
(call_expression
  function: (generic_function
    function: [(identifier) (scoped_identifier) (field_expression)] @call.target))
