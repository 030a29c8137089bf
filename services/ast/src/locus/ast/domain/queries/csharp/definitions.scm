; Block namespaces are containers (`namespace A.B { class C {} }` -> `A.B.C`); a file-scoped
; `namespace A.B;` is the file's namespace (package.scm).
(namespace_declaration
  name: (_) @name
  body: (declaration_list) @body) @definition.namespace

; Types with a body; records are classes (`record struct` too).
(class_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.class

(record_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.class

(struct_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.struct

(interface_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.interface

(enum_declaration
  name: (identifier) @name
  body: (enum_member_declaration_list) @body) @definition.enum

; Constructors, methods (block or `=>` body) and local functions; abstract and interface
; methods without a body are no definitions.
(constructor_declaration
  name: (identifier) @name
  body: [(block) (arrow_expression_clause)] @body) @definition.constructor

(method_declaration
  name: (identifier) @name
  body: [(block) (arrow_expression_clause)] @body) @definition.function

(local_function_statement
  name: (identifier) @name
  body: [(block) (arrow_expression_clause)] @body) @definition.function

; Methods declared without a body (an interface's, an abstract or partial one): signatures,
; symbols that calls through the type resolve to, with no chunk of their own.
(method_declaration
  name: (identifier) @name
  !body) @definition.signature
