; JavaScript definitions. queries/typescript/definitions.scm repeats these patterns with the
; TypeScript node names (type_identifier class names, public_field_definition) and adds
; TypeScript's own declarations: keep the two in step.

; ---- Containers ----------------------------------------------------------------------------

; class Foo extends Bar { ... }
(class_declaration
  name: (identifier) @name
  body: (class_body) @body) @definition.class

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
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
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

(expression_statement
  (assignment_expression) @wrapped) @wrapper

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
