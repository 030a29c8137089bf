; import "github.com/acme/shop/billing" (alone or in a group): binds `billing`.
(import_spec
  !name
  path: (interpreted_string_literal
    (interpreted_string_literal_content) @import.module)) @import.statement

; import b "github.com/acme/shop/billing" / import _ "embed"
(import_spec
  name: [(package_identifier) (blank_identifier)] @import.alias
  path: (interpreted_string_literal
    (interpreted_string_literal_content) @import.module)) @import.statement

; import . "strings": the package's names are used unqualified.
(import_spec
  name: (dot) @import.wildcard
  path: (interpreted_string_literal
    (interpreted_string_literal_content) @import.module)) @import.statement
