; require_relative 'tax'  (captured with its quotes: relative to the requiring file)
(call
  method: (identifier) @_method
  arguments: (argument_list . (string . (string_content) .) @import.module .)
  (#eq? @_method "require_relative")) @import.statement

; require 'billing/invoice'  (relative to the load path)
(call
  method: (identifier) @_method
  arguments: (argument_list . (string . (string_content) @import.module .) .)
  (#eq? @_method "require")) @import.statement
