; Named types. A declaration of one type (`type Invoice struct {...}`) is the definition, so
; its signature reads `type Invoice struct`; in a grouped `type ( ... )` each spec is one.
((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (struct_type (field_declaration_list) @body))) @definition.struct
  (#match? @definition.struct "^type\\s+[^(\\s]"))

((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (interface_type) @body)) @definition.interface
  (#match? @definition.interface "^type\\s+[^(\\s]"))

; Other named types (`type Status int`, `type HandlerFunc func(...)`) can carry methods.
((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [
      (type_identifier) (qualified_type) (pointer_type) (generic_type) (function_type)
      (map_type) (slice_type) (array_type) (channel_type)
    ] @body)) @definition.class
  (#match? @definition.class "^type\\s+[^(\\s]"))

((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (struct_type (field_declaration_list) @body)) @definition.struct) @_group
  (#match? @_group "^type\\s*\\("))

((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: (interface_type) @body) @definition.interface) @_group
  (#match? @_group "^type\\s*\\("))

((type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [
      (type_identifier) (qualified_type) (pointer_type) (generic_type) (function_type)
      (map_type) (slice_type) (array_type) (channel_type)
    ] @body) @definition.class) @_group
  (#match? @_group "^type\\s*\\("))

; Functions, and methods named by their receiver's type (`func (s *Server) Serve()`).
(function_declaration
  name: (identifier) @name
  body: (block) @body) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      name: (identifier)? @receiver.name
      type: (_) @receiver))
  name: (field_identifier) @name
  body: (block) @body) @definition.method

; An interface's methods: signatures, symbols that calls on a variable of the interface type
; resolve to, with no chunk of their own (embedded interfaces are `type_elem`s, no members).
(type_spec
  type: (interface_type
    (method_elem
      name: (field_identifier) @name) @definition.signature))

; `type A = B`: a type alias (no methods of its own: they are B's), found and outlined, no chunk
; of its own; alone, the declaration with its doc comment; in a group, the spec.
((type_declaration
  (type_alias
    name: (type_identifier) @name)) @definition.type_alias
  (#match? @definition.type_alias "^type\\s+[^(\\s]"))

((type_declaration
  (type_alias
    name: (type_identifier) @name) @definition.type_alias) @_group
  (#match? @_group "^type\\s*\\("))

; Package-level constants and variables (`const DefaultRetries = 3`, `var ErrClosed = ...`):
; constants, found and outlined with their doc comment, no chunk of their own. Alone, the
; declaration; in a group, each spec. A function's own are none.
((const_declaration
  (const_spec
    name: (identifier) @name)) @definition.constant
  (#match? @definition.constant "^const\\s+[^(\\s]"))

((const_declaration
  (const_spec
    name: (identifier) @name) @definition.constant) @_group
  (#match? @_group "^const\\s*\\("))

((var_declaration
  (var_spec
    name: (identifier) @name)) @definition.constant
  (#match? @definition.constant "^var\\s+[^(\\s]"))

((var_declaration
  (var_spec
    name: (identifier) @name) @definition.constant) @_group
  (#match? @_group "^var\\s*\\("))
