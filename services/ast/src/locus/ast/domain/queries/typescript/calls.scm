; queries/javascript/calls.scm without its JSX patterns (the typescript grammar has no JSX;
; the TSX spec reads the JavaScript file). Calls keep the callee as written
; (helper, this.retry, api.client.get); `new Foo()` calls the class Foo. `require(...)` is an
; import, not a call.
(call_expression
  function: (_) @call.target
  (#not-eq? @call.target "require"))

(new_expression
  constructor: (_) @call.target)
