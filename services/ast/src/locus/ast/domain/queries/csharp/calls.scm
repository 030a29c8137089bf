; Save(), this.Save(), Helper.Run(), Parse<T>(): the callee as written.
(invocation_expression
  function: [
    (identifier)
    (generic_name)
    (member_access_expression)
  ] @call.target)

; new Logger(...), new Serilog.Core.Logger(...), new Cache<K, V>(...) call the class (its
; constructors live under it), as in Java.
(object_creation_expression
  type: [(identifier) (qualified_name)] @call.target)

(object_creation_expression
  type: (generic_name
    (identifier) @call.target))
