; helper(x)
(method_invocation
  !object
  name: (identifier) @call.target)

; this.save(x), repository.save(x), Strings.pad(x): the callee runs from the receiver to the name.
(method_invocation
  object: (_) @call.target
  name: (identifier) @call.last)

; new Invoice(...) calls the class (its constructor, when it declares one, lives under it).
(object_creation_expression
  type: [(type_identifier) (scoped_type_identifier)] @call.target)

(object_creation_expression
  type: (generic_type
    [(type_identifier) (scoped_type_identifier)] @call.target))
