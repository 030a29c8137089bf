; Classes and case classes, objects (-> class; a companion object shares its class's name, so
; its members are qualified under the class), traits, Scala 3 enums.
(class_definition
  name: (identifier) @name
  body: (template_body) @body) @definition.class

(object_definition
  name: (identifier) @name
  body: (template_body) @body) @definition.class

(trait_definition
  name: (identifier) @name
  body: (template_body) @body) @definition.trait

(enum_definition
  name: (identifier) @name
  body: (enum_body) @body) @definition.enum

; Without a body (`case class Point(x: Int) extends Shape`, `case object Origin extends Shape`)
; the last header part stands in for the body, so the type still is a symbol with a chunk.
(class_definition
  name: (identifier) @name
  [(class_parameters) (extends_clause)] @body .) @definition.class

(object_definition
  name: (identifier) @name
  (extends_clause) @body .) @definition.class

; Auxiliary constructors: def this(...) = this(...).
(function_definition
  name: (identifier) @name
  body: (_) @body
  (#eq? @name "this")) @definition.constructor

; def with a body (declarations without one are abstract); inside a type it is a method.
; Operators are methods too (`def ++(other: Str)`).
(function_definition
  name: [(identifier) (operator_identifier)] @name
  body: (_) @body) @definition.function

; Abstract members (`def area: Double` in a trait or abstract class): signatures, symbols that
; calls through the type resolve to, with no chunk of their own.
(template_body
  (function_declaration
    name: [(identifier) (operator_identifier)] @name) @definition.signature)

; A package object (`package object os { def pwd = ... }`): its members are the package's.
(package_object
  name: (identifier) @name
  body: (template_body) @body) @definition.namespace

; `type State = Long` (and an abstract type member, `type T`): a type alias, found and
; outlined, no chunk of its own.
(type_definition
  name: (type_identifier) @name) @definition.type_alias
