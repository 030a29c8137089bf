; class Invoice < Base
(class
  superclass: (superclass [(constant) (scope_resolution)] @inherits.base)) @inherits.class

; include Comparable / extend Forwardable / prepend Audited, directly in a class or module
(class
  body: (body_statement
    (call
      method: (identifier) @_mixin
      arguments: (argument_list [(constant) (scope_resolution)] @inherits.base)
      (#any-of? @_mixin "include" "extend" "prepend")))) @inherits.class

(module
  body: (body_statement
    (call
      method: (identifier) @_mixin
      arguments: (argument_list [(constant) (scope_resolution)] @inherits.base)
      (#any-of? @_mixin "include" "extend" "prepend")))) @inherits.class
