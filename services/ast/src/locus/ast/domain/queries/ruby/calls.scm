; Method calls: the callee runs from the receiver to the method name (`Billing::Tax.rate`,
; `Invoice.new`, `self.total`, `helper`); calls on literals and on other calls' results name
; nothing, and loading, mixins, visibility and printing are not calls of note.
(call
  !receiver
  method: (_) @call.last
  (#not-match? @call.last "^(require|require_relative|load|include|extend|prepend|attr_reader|attr_writer|attr_accessor|private|public|protected|module_function|private_constant|puts|print|p|pp|raise|lambda|proc)$")) @call.target

(call
  receiver: [(constant) (scope_resolution) (self) (identifier) (instance_variable)]
  method: (_) @call.last) @call.target
