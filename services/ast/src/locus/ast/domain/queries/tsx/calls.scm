; Calls keep the callee as written (helper, this.retry, api.client.get); `new Foo()` calls the
; class Foo. `require(...)` is an import, not a call.
(call_expression
  function: (_) @call.target
  (#not-eq? @call.target "require"))

(new_expression
  constructor: (_) @call.target)

; <Button /> and <Dialog.Title>: rendering a component (capitalised) calls it.
(jsx_opening_element
  name: [(identifier) (member_expression)] @call.target
  (#match? @call.target "^[A-Z]"))

(jsx_self_closing_element
  name: [(identifier) (member_expression)] @call.target
  (#match? @call.target "^[A-Z]"))
