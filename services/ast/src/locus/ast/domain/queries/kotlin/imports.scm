; import com.acme.util.Strings binds Strings -> com.acme.util.Strings (a type or a top-level
; function); `as` renames the binding. The path has no node for its package part, so the
; module capture spans its first to its second-to-last segment.
(import_header
  (identifier
    .
    (simple_identifier) @import.module
    .
    (simple_identifier) @import.name .) .) @import.statement

(import_header
  (identifier
    .
    (simple_identifier) @import.module
    (simple_identifier) @import.module
    .
    (simple_identifier) @import.name .) .) @import.statement

(import_header
  (identifier
    .
    (simple_identifier) @import.module
    .
    (simple_identifier) @import.name .)
  .
  [(import_alias (type_identifier) @import.alias) (line_comment) (multiline_comment)]) @import.statement

(import_header
  (identifier
    .
    (simple_identifier) @import.module
    (simple_identifier) @import.module
    .
    (simple_identifier) @import.name .)
  .
  [(import_alias (type_identifier) @import.alias) (line_comment) (multiline_comment)]) @import.statement

; import com.acme.util.*
(import_header
  (identifier) @import.module
  .
  (wildcard_import) @import.wildcard) @import.statement
