; helper(x), Invoice("x") (a constructor call names the class), this.total(), Strings.pad(x)
(call_expression
  .
  [(simple_identifier) (navigation_expression)] @call.target)
