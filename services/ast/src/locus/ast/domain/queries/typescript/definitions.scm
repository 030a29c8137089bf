; TypeScript definitions: queries/javascript/definitions.scm with TypeScript's node names
; (type_identifier class names, public_field_definition) and TypeScript's own declarations
; (abstract classes, interfaces, enums, namespaces): keep the two in step. The TSX spec reads
; this file too (its query_sources).
; Signatures without a body (overloads, `declare function`, everything in a .d.ts) are no
; definitions; an interface's methods and abstract methods are signatures (at the end).

; ---- Containers ----------------------------------------------------------------------------

; class Foo<T> extends Bar implements Baz { ... } / abstract class Foo { ... }
(class_declaration
  name: (type_identifier) @name
  body: (class_body) @body) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name
  body: (class_body) @body) @definition.class

; interface Repo<T> extends Base { ... }
(interface_declaration
  name: (type_identifier) @name
  body: (interface_body) @body) @definition.interface

; enum Color { Red, Green }
(enum_declaration
  name: (identifier) @name
  body: (enum_body) @body) @definition.enum

; namespace Billing.Tax { ... } / module Billing { ... } / declare module 'express' { ... }
(internal_module
  name: [(identifier) (nested_identifier)] @name
  body: (statement_block) @body) @definition.namespace

(module
  name: [(identifier) (nested_identifier)] @name
  body: (statement_block) @body) @definition.namespace

(module
  name: (string (string_fragment) @name)
  body: (statement_block) @body) @definition.namespace

; const Foo = class { ... }
(variable_declarator
  name: (identifier) @name
  value: (class
    body: (class_body) @body)) @definition.class

; const api = { get() {}, post: function () {} }: an object literal of functions bound to a
; name is a container of methods (`api.get`); objects holding no function are plain values.
(variable_declarator
  name: (identifier) @name
  value: (object
    [(method_definition)
     (pair
       value: [(function_expression) (arrow_function) (generator_function)])]) @body) @definition.class

; { users: { list() {} } }: a nested object of functions is a container of its own.
(pair
  key: (property_identifier) @name
  value: (object
    [(method_definition)
     (pair
       value: [(function_expression) (arrow_function) (generator_function)])]) @body) @definition.class

; Foo.prototype = { bar() {}, baz: function () {} }: members of Foo.
(assignment_expression
  left: (member_expression
    object: (identifier) @name
    property: (property_identifier) @_prototype (#eq? @_prototype "prototype"))
  right: (object) @body) @definition.class

; ---- Callables -----------------------------------------------------------------------------

; function foo() {} / function* foo() {}
(function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @definition.function

(generator_function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @definition.function

; class and object-literal methods; `constructor` is the class's constructor.
(method_definition
  name: (property_identifier) @name (#eq? @name "constructor")
  body: (statement_block) @body) @definition.constructor

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name (#not-eq? @name "constructor")
  body: (statement_block) @body) @definition.function

; handle = () => {} / handle = function () {} as a class field
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [
    (arrow_function body: (_) @body)
    (function_expression body: (_) @body)
    (generator_function body: (_) @body)
  ]) @definition.function

; const foo = () => {} / let foo = function () {} / var foo = function* () {}
(variable_declarator
  name: (identifier) @name
  value: [
    (arrow_function body: (_) @body)
    (function_expression body: (_) @body)
    (generator_function body: (_) @body)
  ]) @definition.function

; { post: function () {}, put: () => {} } inside an object literal
(pair
  key: (property_identifier) @name
  value: [
    (arrow_function body: (_) @body)
    (function_expression body: (_) @body)
    (generator_function body: (_) @body)
  ]) @definition.function

; Foo.prototype.bar = function () {}: a method of Foo (`Foo.bar`).
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @receiver
      property: (property_identifier) @_prototype (#eq? @_prototype "prototype"))
    property: (property_identifier) @name)
  right: [
    (function_expression body: (_) @body)
    (arrow_function body: (_) @body)
    (generator_function body: (_) @body)
  ]) @definition.function

; exports.foo = function () {} / module.exports.foo = () => {}: the module's own `foo`.
(assignment_expression
  left: (member_expression
    object: (identifier) @_exports (#eq? @_exports "exports")
    property: (property_identifier) @name)
  right: [
    (function_expression body: (_) @body)
    (arrow_function body: (_) @body)
    (generator_function body: (_) @body)
  ]) @definition.function

(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @_module (#eq? @_module "module")
      property: (property_identifier) @_exports (#eq? @_exports "exports"))
    property: (property_identifier) @name)
  right: [
    (function_expression body: (_) @body)
    (arrow_function body: (_) @body)
    (generator_function body: (_) @body)
  ]) @definition.function

; Foo.create = function () {}: a static member of Foo (`Foo.create`).
(assignment_expression
  left: (member_expression
    object: (identifier) @receiver (#not-match? @receiver "^(exports|module)$")
    property: (property_identifier) @name)
  right: [
    (function_expression body: (_) @body)
    (arrow_function body: (_) @body)
    (generator_function body: (_) @body)
  ]) @definition.function

; ---- Wrappers: `export`, declarations, assignment statements ---------------------------------

(export_statement
  declaration: (_) @wrapped) @wrapper

(lexical_declaration
  (variable_declarator) @wrapped) @wrapper

(variable_declaration
  (variable_declarator) @wrapped) @wrapper

; declare class Foo {} / declare namespace N {} / declare module 'x' {}
(ambient_declaration
  [(class_declaration)
   (abstract_class_declaration)
   (interface_declaration)
   (enum_declaration)
   (internal_module)
   (module)
   (function_declaration)
   (function_signature)
   (type_alias_declaration)
   (lexical_declaration)
   (variable_declaration)] @wrapped) @wrapper

(expression_statement
  (assignment_expression) @wrapped) @wrapper

; ---- Signatures ----------------------------------------------------------------------------

; An interface's methods and a class's abstract ones: signatures, symbols that calls through
; the type resolve to, with no chunk of their own. So are functions and methods declared
; without a body: a declaration file's API (`declare function f(): void;`, a `declare class`'s
; methods in `index.d.ts`) and overload signatures — those before an implementation of their
; name fold into it (the implementation is the symbol).
(function_signature
  name: (identifier) @name) @definition.signature

(class_body
  (method_signature
    name: [(property_identifier) (private_property_identifier) (string) (computed_property_name)] @name) @definition.signature)

(interface_declaration
  body: (interface_body
    (method_signature
      name: [(property_identifier) (string) (computed_property_name)] @name) @definition.signature))

(abstract_class_declaration
  body: (class_body
    (abstract_method_signature
      name: [(property_identifier) (private_property_identifier)] @name) @definition.signature))

; ---- Type aliases --------------------------------------------------------------------------

; `export type Options = {...}`: a symbol to find and outline, with no chunk of its own (its
; text stays in the chunks around it) and never a candidate of a ranking.
(type_alias_declaration
  name: (type_identifier) @name) @definition.type_alias

; A module-level UPPER_CASE `const` (`export const DEFAULT_TIMEOUT = 10_000;`) whose value is no
; function or class: a constant, found and outlined, no chunk of its own. (An object with
; methods matched a pattern above first.)
(program
  (lexical_declaration
    "const"
    (variable_declarator
      name: (identifier) @name
      value: (_) @_value) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]+$")
  (#not-match? @_value "^(async\\s+)?(function|class)\\b|=>"))

(program
  (export_statement
    declaration: (lexical_declaration
      "const"
      (variable_declarator
        name: (identifier) @name
        value: (_) @_value) @definition.constant))
  (#match? @name "^[A-Z][A-Z0-9_]+$")
  (#not-match? @_value "^(async\\s+)?(function|class)\\b|=>"))
