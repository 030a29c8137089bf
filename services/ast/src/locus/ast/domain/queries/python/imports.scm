; import a.b.c
(import_statement
  name: (dotted_name) @import.module) @import.statement

; import a.b.c as alias
(import_statement
  name: (aliased_import
    name: (dotted_name) @import.module
    alias: (identifier) @import.alias)) @import.statement

; from a.b import c / from .a import c / from . import c
(import_from_statement
  module_name: (_) @import.module
  name: (dotted_name) @import.name) @import.statement

; from a.b import c as alias
(import_from_statement
  module_name: (_) @import.module
  name: (aliased_import
    name: (dotted_name) @import.name
    alias: (identifier) @import.alias)) @import.statement

; from a.b import *
(import_from_statement
  module_name: (_) @import.module
  (wildcard_import) @import.wildcard) @import.statement
