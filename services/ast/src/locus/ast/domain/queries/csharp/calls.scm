; Save(), this.Save(), Helper.Run(), Parse<T>(): the callee as written.
(invocation_expression
  function: [
    (identifier)
    (generic_name)
    (member_access_expression)
  ] @call.target)
