; import com.acme.util.Strings;  binds Strings -> com.acme.util.Strings
; import static com.acme.util.Strings.pad;  binds pad -> com.acme.util.Strings.pad
(import_declaration
  (scoped_identifier
    scope: (_) @import.module
    name: (identifier) @import.name) .) @import.statement

; import com.acme.util.*;  /  import static com.acme.util.Strings.*;
(import_declaration
  [(scoped_identifier) (identifier)] @import.module
  .
  (asterisk) @import.wildcard) @import.statement
