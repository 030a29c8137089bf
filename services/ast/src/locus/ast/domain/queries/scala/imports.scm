; import com.acme.util.Strings binds Strings -> com.acme.util.Strings; selectors
; `{pad, Other => Renamed}` and Scala 3 `as` bind each name. The path has no node of its own,
; so the module capture spans its first to its last package segment (one pattern for a
; one-segment package, one for longer ones).

(import_declaration
  .
  (identifier) @import.module
  .
  (identifier) @import.name .) @import.statement

(import_declaration
  .
  (identifier) @import.module
  (identifier) @import.module
  .
  (identifier) @import.name .) @import.statement

(import_declaration
  .
  (identifier) @import.module
  .
  (namespace_selectors
    [(identifier) @import.name
     (arrow_renamed_identifier name: (identifier) @import.name alias: (identifier) @import.alias)])) @import.statement

(import_declaration
  .
  (identifier) @import.module
  (identifier) @import.module
  .
  (namespace_selectors
    [(identifier) @import.name
     (arrow_renamed_identifier name: (identifier) @import.name alias: (identifier) @import.alias)])) @import.statement

(import_declaration
  .
  (identifier) @import.module
  .
  (as_renamed_identifier name: (identifier) @import.name alias: (identifier) @import.alias)) @import.statement

(import_declaration
  .
  (identifier) @import.module
  (identifier) @import.module
  .
  (as_renamed_identifier name: (identifier) @import.name alias: (identifier) @import.alias)) @import.statement

(import_declaration
  .
  (identifier) @import.module
  .
  (namespace_wildcard) @import.wildcard) @import.statement

(import_declaration
  .
  (identifier) @import.module
  (identifier) @import.module
  .
  (namespace_wildcard) @import.wildcard) @import.statement

(import_declaration
  .
  (identifier) @import.module
  .
  (namespace_selectors (namespace_wildcard) @import.wildcard)) @import.statement

(import_declaration
  .
  (identifier) @import.module
  (identifier) @import.module
  .
  (namespace_selectors (namespace_wildcard) @import.wildcard)) @import.statement
