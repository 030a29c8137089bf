; Every call; the callee is kept as written (helper, billing.NewInvoice, s.repo.Save).
(call_expression
  function: [(identifier) (selector_expression)] @call.target)

; Explicit type arguments: `Map[int](xs)` calls Map (parsed as an index or a conversion).
(call_expression
  function: (index_expression
    operand: [(identifier) (selector_expression)] @call.target))

(type_conversion_expression
  type: (generic_type
    type: [(type_identifier) (qualified_type)] @call.target))
