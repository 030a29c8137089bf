; Classes and functions (methods are functions whose parent is a class).
(class_definition
  name: (identifier) @name
  body: (block) @body) @definition.class

(function_definition
  name: (identifier) @name
  body: (block) @body) @definition.function

; Decorators belong to the definition they decorate.
(decorated_definition
  definition: (_) @wrapped) @wrapper

; A module-level UPPER_CASE name (`MAX_RETRIES = 3`, `TIMEOUT: float = 2.0`): a constant, found
; and outlined, no chunk of its own.
(module
  (assignment
    left: (identifier) @name) @definition.constant
  (#match? @name "^[A-Z][A-Z0-9_]+$"))
