; queries/javascript/imports.scm plus `import x = require('./x')`: keep the two in step.
; The TSX spec reads this file too (its query_sources).

; import './polyfills'
(import_statement
  "import"
  .
  source: (string (string_fragment) @import.module)) @import.statement

; import Foo from './foo': the default export of a file is taken to be named as imported
; (`foo.Foo`, the class or function `export default` names); that of a package is the package.
(import_statement
  (import_clause
    (identifier) @import.name)
  source: (string (string_fragment) @import.module)
  (#match? @import.module "^[.]")) @import.statement

(import_statement
  (import_clause
    (identifier) @import.alias)
  source: (string (string_fragment) @import.module)
  (#not-match? @import.module "^[.]")) @import.statement

; import { a, b as c } from '../lib'
(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (_) @import.name
        alias: (_)? @import.alias)))
  source: (string (string_fragment) @import.module)) @import.statement

; import * as utils from './utils'
(import_statement
  (import_clause
    (namespace_import (identifier) @import.alias))
  source: (string (string_fragment) @import.module)) @import.statement

; export { a, b as c } from './lib'
(export_statement
  (export_clause
    (export_specifier
      name: (_) @import.name
      alias: (_)? @import.alias))
  source: (string (string_fragment) @import.module)) @import.statement

; export * from './lib'; export * as lib from './lib'
(export_statement
  "*" @import.wildcard
  source: (string (string_fragment) @import.module)) @import.statement

(export_statement
  (namespace_export (identifier) @import.alias)
  source: (string (string_fragment) @import.module)) @import.statement

; const lib = require('./lib')
(variable_declarator
  name: (identifier) @import.alias
  value: (call_expression
    function: (identifier) @_require (#eq? @_require "require")
    arguments: (arguments . (string (string_fragment) @import.module) .))) @import.statement

; const { a, b: c } = require('./lib')
(variable_declarator
  name: (object_pattern
    (shorthand_property_identifier_pattern) @import.name)
  value: (call_expression
    function: (identifier) @_require (#eq? @_require "require")
    arguments: (arguments . (string (string_fragment) @import.module) .))) @import.statement

(variable_declarator
  name: (object_pattern
    (pair_pattern
      key: (property_identifier) @import.name
      value: (identifier) @import.alias))
  value: (call_expression
    function: (identifier) @_require (#eq? @_require "require")
    arguments: (arguments . (string (string_fragment) @import.module) .))) @import.statement

; require('./polyfills')
(expression_statement
  (call_expression
    function: (identifier) @_require (#eq? @_require "require")
    arguments: (arguments . (string (string_fragment) @import.module) .))) @import.statement

; import lib = require('./lib')
(import_statement
  (import_require_clause
    (identifier) @import.alias
    source: (string (string_fragment) @import.module))) @import.statement
