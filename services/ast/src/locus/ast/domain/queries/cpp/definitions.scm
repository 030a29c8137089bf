; Constructors first (the first pattern matching a node decides its kind): a function named
; like the class it is defined in, or written `Foo::Foo` / `ns::Foo::Foo` / `Foo<T>::Foo`.
(class_specifier
  name: (_) @class_name
  body: (field_declaration_list
    (function_definition
      declarator: (function_declarator
        declarator: (identifier) @name)
      body: (_) @body) @definition.constructor)
  (#eq? @class_name @name))

(struct_specifier
  name: (_) @class_name
  body: (field_declaration_list
    (function_definition
      declarator: (function_declarator
        declarator: (identifier) @name)
      body: (_) @body) @definition.constructor)
  (#eq? @class_name @name))

(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: [
        (namespace_identifier) @class_name
        (template_type name: (_) @class_name)
      ]
      name: (identifier) @constructor_name) @name)
  body: (_) @body
  (#eq? @class_name @constructor_name)) @definition.constructor

(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      name: (qualified_identifier
        scope: [
          (namespace_identifier) @class_name
          (template_type name: (_) @class_name)
        ]
        name: (identifier) @constructor_name)) @name)
  body: (_) @body
  (#eq? @class_name @constructor_name)) @definition.constructor

; Functions and methods with a body, in-class or out-of-line (`void ns::Foo::bar()`: the
; written scope becomes the enclosing scope); the name sits in the (pointer, reference,
; parenthesized) function declarator. Declarations without a body are signatures (at the end).
(function_definition
  declarator: [
    (function_declarator
      declarator: [
        (identifier)
        (field_identifier)
        (qualified_identifier)
        (destructor_name)
        (operator_name)
        (template_function)
      ] @name)
    (pointer_declarator
      declarator: (function_declarator
        declarator: [
          (identifier)
          (field_identifier)
          (qualified_identifier)
          (operator_name)
          (template_function)
        ] @name))
    (pointer_declarator
      declarator: (pointer_declarator
        declarator: (function_declarator
          declarator: [
            (identifier)
            (field_identifier)
            (qualified_identifier)
          ] @name)))
    (reference_declarator
      (function_declarator
        declarator: [
          (identifier)
          (field_identifier)
          (qualified_identifier)
          (operator_name)
          (template_function)
        ] @name))
    (function_declarator
      declarator: (parenthesized_declarator
        (pointer_declarator
          declarator: (function_declarator
            declarator: [
              (identifier)
              (qualified_identifier)
            ] @name))))
    (operator_cast) @name
    (qualified_identifier
      name: (operator_cast)) @name
    ; `ns::result<T>::operator T()`: each scope nests one level deeper.
    (qualified_identifier
      name: (qualified_identifier
        name: (operator_cast))) @name
    (qualified_identifier
      name: (qualified_identifier
        name: (qualified_identifier
          name: (operator_cast)))) @name
  ]
  body: (_) @body) @definition.function

; Namespaces (`namespace a::b {}` too); anonymous ones are no definitions.
(namespace_definition
  name: (_) @name
  body: (declaration_list) @body) @definition.namespace

; Classes, structs, unions and enums with a body (`enum class` too).
(class_specifier
  name: (_) @name
  body: (field_declaration_list) @body) @definition.class

(struct_specifier
  name: (_) @name
  body: (field_declaration_list) @body) @definition.struct

(union_specifier
  name: (_) @name
  body: (field_declaration_list) @body) @definition.struct

(enum_specifier
  name: (_) @name
  body: (enumerator_list) @body) @definition.enum

; `typedef struct { ... } Name;`: an anonymous type is named by its typedef.
(type_definition
  type: [
    (struct_specifier !name body: (field_declaration_list) @body)
    (union_specifier !name body: (field_declaration_list) @body)
  ] @definition.struct
  declarator: (type_identifier) @name)

(type_definition
  type: (enum_specifier !name body: (enumerator_list) @body) @definition.enum
  declarator: (type_identifier) @name)

; Templates, typedefs, declarations (`struct Inner {...};` in a class, `struct S {...} s;`)
; and friend definitions start where their wrapper starts.
(template_declaration
  (_) @wrapped) @wrapper

(type_definition
  type: (_) @wrapped) @wrapper

(declaration
  type: (_) @wrapped) @wrapper

(field_declaration
  type: (_) @wrapped) @wrapper

(friend_declaration
  (_) @wrapped) @wrapper

; Functions and members declared without a body — prototypes, in-class member declarations
; (`int size() const noexcept;`, `virtual void run() = 0;`, `Parser(int depth);`): signatures,
; symbols with no chunk of their own. One whose name a definition in the same file owns
; folds into it; one inside a function body (`std::string s(buf);` reads as a declaration)
; or a `friend` declaration (no member) is none.
(declaration
  declarator: [
    (function_declarator
      declarator: [
        (identifier)
        (destructor_name)
        (operator_name)
      ] @name)
    (pointer_declarator
      declarator: (function_declarator
        declarator: [(identifier) (operator_name)] @name))
    (reference_declarator
      (function_declarator
        declarator: [(identifier) (operator_name)] @name))
  ]) @definition.signature

(field_declaration
  declarator: [
    (function_declarator
      declarator: [
        (field_identifier)
        (destructor_name)
        (operator_name)
      ] @name)
    (pointer_declarator
      declarator: (function_declarator
        declarator: [(field_identifier) (operator_name)] @name))
    (reference_declarator
      (function_declarator
        declarator: [(field_identifier) (operator_name)] @name))
  ]) @definition.signature

; `using Id = std::uint64_t;` (a template's too): a type alias, found and outlined, no chunk of
; its own.
(alias_declaration
  name: (type_identifier) @name) @definition.type_alias

; An object-like macro with a value (`#define ZSTD_CLEVEL_DEFAULT 3`): a constant, found and
; outlined with its comment, no chunk of its own. Guards without a value and function-like
; macros are none.
(preproc_def
  name: (identifier) @name
  value: (preproc_arg)) @definition.constant
