; Types: classes, records (-> class), interfaces, annotation types (-> interface), enums. Local
; classes inside methods count too; anonymous class bodies do not (their methods stay part of
; the method around them).
(class_declaration
  name: (identifier) @name
  body: (class_body) @body) @definition.class

(record_declaration
  name: (identifier) @name
  body: (class_body) @body) @definition.class

(interface_declaration
  name: (identifier) @name
  body: (interface_body) @body) @definition.interface

(annotation_type_declaration
  name: (identifier) @name
  body: (annotation_type_body) @body) @definition.interface

(enum_declaration
  name: (identifier) @name
  body: (enum_body) @body) @definition.enum

; Methods with a body, as members of a named type; enum members follow the constants in
; `enum_body_declarations`. Those without one are signatures (at the end of this file).
(class_declaration
  body: (class_body
    (method_declaration
      name: (identifier) @name
      body: (block) @body) @definition.method))

(record_declaration
  body: (class_body
    (method_declaration
      name: (identifier) @name
      body: (block) @body) @definition.method))

(interface_declaration
  body: (interface_body
    (method_declaration
      name: (identifier) @name
      body: (block) @body) @definition.method))

(enum_declaration
  body: (enum_body
    (enum_body_declarations
      (method_declaration
        name: (identifier) @name
        body: (block) @body) @definition.method)))

; Constructors are named after their class: `Invoice.Invoice`.
(class_declaration
  body: (class_body
    (constructor_declaration
      name: (identifier) @name
      body: (constructor_body) @body) @definition.constructor))

(record_declaration
  body: (class_body
    (constructor_declaration
      name: (identifier) @name
      body: (constructor_body) @body) @definition.constructor))

(record_declaration
  body: (class_body
    (compact_constructor_declaration
      name: (identifier) @name
      body: (block) @body) @definition.constructor))

(enum_declaration
  body: (enum_body
    (enum_body_declarations
      (constructor_declaration
        name: (identifier) @name
        body: (constructor_body) @body) @definition.constructor)))

; Methods declared without a body (an interface's, an abstract class's): signatures, symbols
; that calls through the type resolve to, with no chunk of their own.
(interface_declaration
  body: (interface_body
    (method_declaration
      name: (identifier) @name
      !body) @definition.signature))

(class_declaration
  body: (class_body
    (method_declaration
      name: (identifier) @name
      !body) @definition.signature))

(enum_declaration
  body: (enum_body
    (enum_body_declarations
      (method_declaration
        name: (identifier) @name
        !body) @definition.signature)))

; `static final` fields (`public static final int MAX_RETRIES = 3;`) and enum constants:
; constants, found and outlined with their Javadoc, no chunk of their own.
(field_declaration
  (modifiers "static" "final")
  declarator: (variable_declarator
    name: (identifier) @name)) @definition.constant

(field_declaration
  (modifiers "final" "static")
  declarator: (variable_declarator
    name: (identifier) @name)) @definition.constant

(enum_body
  (enum_constant
    name: (identifier) @name) @definition.constant)
