; using System.Text; / using static System.Math; (every name of the namespace or type)
(using_directive
  !name
  [(identifier) (qualified_name)] @import.module @import.wildcard) @import.statement

; global using Serilog.Core; (every file of the project takes it; the pattern above matches it
; too, and the global match is kept)
(using_directive
  "global" @import.global
  !name
  [(identifier) (qualified_name)] @import.module @import.wildcard) @import.statement

; using Json = Acme.Serialization.Json;
(using_directive
  name: (identifier) @import.alias
  (qualified_name
    qualifier: (_) @import.module
    name: (_) @import.name)) @import.statement
