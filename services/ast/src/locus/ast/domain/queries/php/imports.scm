; use App\Models\User;  use function App\Support\format_money;  (binds the last segment)
(namespace_use_declaration
  (namespace_use_clause
    [(qualified_name (name) @import.alias .) (name) @import.alias] @import.module
    !alias)) @import.statement

; use App\Models\User as Account;
(namespace_use_declaration
  (namespace_use_clause
    [(qualified_name) (name)] @import.module
    alias: (name) @import.alias)) @import.statement

; use App\Services\{Mailer, Billing\Invoice as Bill};
(namespace_use_declaration
  (namespace_name) @import.module
  body: (namespace_use_group
    (namespace_use_clause
      [(qualified_name (name) @import.alias .) (name) @import.alias] @import.name
      !alias))) @import.statement

(namespace_use_declaration
  (namespace_name) @import.module
  body: (namespace_use_group
    (namespace_use_clause
      [(qualified_name) (name)] @import.name
      alias: (name) @import.alias))) @import.statement

; require_once __DIR__ . '/helpers.php';  (a path next to the including file)
(require_expression
  (binary_expression
    left: (name) @_dir
    right: (string (string_content) @import.module))
  (#eq? @_dir "__DIR__")) @import.statement

(require_once_expression
  (binary_expression
    left: (name) @_dir
    right: (string (string_content) @import.module))
  (#eq? @_dir "__DIR__")) @import.statement

(include_expression
  (binary_expression
    left: (name) @_dir
    right: (string (string_content) @import.module))
  (#eq? @_dir "__DIR__")) @import.statement

(include_once_expression
  (binary_expression
    left: (name) @_dir
    right: (string (string_content) @import.module))
  (#eq? @_dir "__DIR__")) @import.statement
