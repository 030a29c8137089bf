; Classes, interfaces, enum classes and objects. Companion objects are no definitions of their
; own: their members are called through the class (`Invoice.create()`), so they are qualified
; under it (`Invoice.create`).
(class_declaration
  "interface"
  (type_identifier) @name
  (class_body) @body) @definition.interface

(class_declaration
  "class"
  (type_identifier) @name
  (class_body) @body) @definition.class

(class_declaration
  (type_identifier) @name
  (enum_class_body) @body) @definition.enum

(object_declaration
  (type_identifier) @name
  (class_body) @body) @definition.class

; A class or object without a body (`data class Point(val x: Int)`, `object Idle : State()`):
; its last header part stands in for the body, so it still is a symbol with its own chunk.
(class_declaration
  "class"
  (type_identifier) @name
  [(primary_constructor) (delegation_specifier)] @body .) @definition.class

(object_declaration
  (type_identifier) @name
  (delegation_specifier) @body .) @definition.class

; A top-level extension function (`fun Table.renderText()`): named under its receiver's type
; (`com.jakewharton.picnic.Table.renderText`, as Kotlin developers write it), a method of that
; type, so a call on a typed value (`table.renderText()`) and a bare call inside it (its
; implicit receiver's `cells()`) resolve as a member's would.
(source_file
  (function_declaration
    receiver: (receiver_type) @receiver
    (simple_identifier) @name
    (function_body) @body) @definition.function)

; Functions with a body (`{ ... }` or `= expression`); inside a class they are methods.
(function_declaration
  (simple_identifier) @name
  (function_body) @body) @definition.function

; A function of an interface or abstract class declared without a body: a signature, a symbol
; that calls through the type resolve to, with no chunk of its own. (A function with a body
; matched one of the patterns above first; the first pattern that matches a node decides.)
(class_body
  (function_declaration
    (simple_identifier) @name) @definition.signature)

; `typealias Cents = Long`: a type alias, found and outlined, no chunk of its own.
(type_alias
  "typealias" . (type_identifier) @name) @definition.type_alias

; `const val MAX_RETRIES = 3` (top-level, in an object or a companion) and a top-level `val`:
; constants, found and outlined with their KDoc, no chunk of their own.
(property_declaration
  (modifiers (property_modifier) @_const)
  (variable_declaration (simple_identifier) @name)
  (#eq? @_const "const")) @definition.constant

(source_file
  (property_declaration
    (binding_pattern_kind "val")
    (variable_declaration (simple_identifier) @name)) @definition.constant)
