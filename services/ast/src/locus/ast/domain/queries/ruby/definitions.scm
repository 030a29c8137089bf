; class / module: members are the body_statement's children; an empty one (`class Error <
; StandardError; end`) has none, and its `end` stands in as the body.
(class
  name: [(constant) (scope_resolution)] @name
  body: (body_statement) @body) @definition.class

(class
  name: [(constant) (scope_resolution)] @name
  !body
  "end" @body) @definition.class

(module
  name: [(constant) (scope_resolution)] @name
  body: (body_statement) @body) @definition.namespace

(module
  name: [(constant) (scope_resolution)] @name
  !body
  "end" @body) @definition.namespace

; def initialize -> constructor; def m / def self.m (a method inside a class or module).
(method
  name: (_) @name
  body: (_) @body
  (#eq? @name "initialize")) @definition.constructor

(method
  name: (_) @name
  !body
  "end" @body
  (#eq? @name "initialize")) @definition.constructor

(method
  name: (_) @name
  body: (_) @body
  (#not-eq? @name "initialize")) @definition.function

(method
  name: (_) @name
  !body
  "end" @body
  (#not-eq? @name "initialize")) @definition.function

(singleton_method
  name: (_) @name
  body: (_) @body) @definition.function

(singleton_method
  name: (_) @name
  !body
  "end" @body) @definition.function
