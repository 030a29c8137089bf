; Functions with a body; the name is the identifier inside the (pointer, parenthesized)
; function declarator: `size_t f(void)`, `char *f(void)`, `int (*f(void))(int)`.
; Prototypes (declarations without a body) are signatures (at the end of this file).
(function_definition
  declarator: [
    (function_declarator
      declarator: (identifier) @name)
    (pointer_declarator
      declarator: (function_declarator
        declarator: (identifier) @name))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (function_declarator
          declarator: (identifier) @name)))
    (function_declarator
      declarator: (parenthesized_declarator
        (pointer_declarator
          declarator: (function_declarator
            declarator: (identifier) @name))))
  ]
  body: (compound_statement) @body) @definition.function

; Named structs, unions and enums with a body.
(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list) @body) @definition.enum

; `typedef struct { ... } Name;`: an anonymous type is named by its typedef.
(type_definition
  type: (struct_specifier
    !name
    body: (field_declaration_list) @body) @definition.struct
  declarator: (type_identifier) @name)

(type_definition
  type: (union_specifier
    !name
    body: (field_declaration_list) @body) @definition.struct
  declarator: (type_identifier) @name)

(type_definition
  type: (enum_specifier
    !name
    body: (enumerator_list) @body) @definition.enum
  declarator: (type_identifier) @name)

; A type defined inside a typedef or a variable declaration starts with it.
(type_definition
  type: (_) @wrapped) @wrapper

(declaration
  type: (_) @wrapped) @wrapper

; Prototypes: functions declared without a body (`size_t ZSTD_compress(void *dst, ...);` in a
; header, a static forward declaration): signatures, symbols with no chunk of their own. One
; whose name a definition in the same file owns folds into it; one inside a function body
; (a local declaration) is none.
(declaration
  declarator: [
    (function_declarator
      declarator: (identifier) @name)
    (pointer_declarator
      declarator: (function_declarator
        declarator: (identifier) @name))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (function_declarator
          declarator: (identifier) @name)))
  ]) @definition.signature

; An object-like macro with a value (`#define ZSTD_CLEVEL_DEFAULT 3`): a constant, found and
; outlined with its comment, no chunk of its own. Guards without a value and function-like
; macros are none.
(preproc_def
  name: (identifier) @name
  value: (preproc_arg)) @definition.constant
