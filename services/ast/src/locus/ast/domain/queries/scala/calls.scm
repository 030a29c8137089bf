; helper(x), Invoice("x") (the companion's apply: names the class), this.total(), Strings.pad(x)
(call_expression
  function: [(identifier) (field_expression)] @call.target
  (#not-eq? @call.target "this"))

; convert[Int](x)
(call_expression
  function: (generic_function
    function: [(identifier) (field_expression)] @call.target))

; new Invoice(x)
(instance_expression
  .
  [(type_identifier) (stable_type_identifier)] @call.target)

(instance_expression
  .
  (generic_type
    type: [(type_identifier) (stable_type_identifier)] @call.target))
