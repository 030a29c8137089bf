; #include "x.h" (relative to the including file, then any include directory) and #include <x>
; (include directories only; a system header stays unresolved).
(preproc_include
  path: (string_literal
    (string_content) @import.module)) @import.statement

(preproc_include
  path: (system_lib_string) @import.module) @import.statement
