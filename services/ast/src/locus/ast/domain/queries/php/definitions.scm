; Types: members live in the declaration_list (enum_declaration_list for enums).
(class_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.class

(interface_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.interface

(trait_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.trait

(enum_declaration
  name: (name) @name
  body: (enum_declaration_list) @body) @definition.enum

; Methods with a body; those without one are signatures (at the end of this file).
(method_declaration
  name: (name) @name
  body: (compound_statement) @body
  (#eq? @name "__construct")) @definition.constructor

(method_declaration
  name: (name) @name
  body: (compound_statement) @body
  (#not-eq? @name "__construct")) @definition.function

(function_definition
  name: (name) @name
  body: (compound_statement) @body) @definition.function

; Methods declared without a body (an interface's, an abstract one): signatures, symbols that
; calls through the type resolve to, with no chunk of their own.
(method_declaration
  name: (name) @name
  !body) @definition.signature
