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

; Methods with a body (abstract and interface methods have none and are left out).
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
