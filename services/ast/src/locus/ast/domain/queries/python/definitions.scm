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
