; use crate::billing::Invoice;  use std::fmt;  (the whole path is the module it imports; the
; last segment is the name bound)
(use_declaration
  argument: (scoped_identifier
    name: (identifier) @import.alias) @import.module) @import.statement

; use serde;
(use_declaration
  argument: (identifier) @import.module) @import.statement

; use crate::billing::Invoice as Bill;
(use_declaration
  argument: (use_as_clause
    path: (_) @import.module
    alias: (identifier) @import.alias)) @import.statement

; use crate::billing::{Invoice, LineItem, tax::Rate, Total as T};
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list (identifier) @import.name))) @import.statement

(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list
      (scoped_identifier
        name: (identifier) @import.alias) @import.name))) @import.statement

(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list
      (use_as_clause
        path: (_) @import.name
        alias: (identifier) @import.alias)))) @import.statement

; use crate::billing::{self, Invoice}: `self` imports the module itself.
(use_declaration
  argument: (scoped_use_list
    path: (scoped_identifier name: (identifier) @import.alias) @import.module
    list: (use_list (self)))) @import.statement

; use crate::billing::*;
(use_declaration
  argument: (use_wildcard
    (_) @import.module) @import.wildcard) @import.statement

; mod billing;  (a child module in its own file)
(mod_item
  !body
  name: (identifier) @import.submodule @import.alias) @import.statement
