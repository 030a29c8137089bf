; Types. A unit struct (`struct Marker;`) has no body: its `;` stands for one.
(struct_item
  name: (type_identifier) @name
  body: (_) @body) @definition.struct

(struct_item
  name: (type_identifier) @name
  ";" @body) @definition.struct

(union_item
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.struct

(enum_item
  name: (type_identifier) @name
  body: (enum_variant_list) @body) @definition.enum

(trait_item
  name: (type_identifier) @name
  body: (declaration_list) @body) @definition.trait

; `impl Foo` / `impl<T> Trait for Foo<T>` add members to the type after `for` (the type's
; name, generics and path dropped: `Foo<T>`, `crate::a::Foo` -> `Foo`).
(impl_item
  type: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
  ]
  body: (declaration_list) @body) @definition.impl

; Inline modules (`mod tests { ... }`); `mod tests;` is an import.
(mod_item
  name: (identifier) @name
  body: (declaration_list) @body) @definition.namespace

; Functions; inside an impl or trait (a default body) they are methods. Signatures without a
; body (`fn area(&self) -> f64;` in a trait) are signatures (at the end of this file).
(function_item
  name: (identifier) @name
  body: (block) @body) @definition.function

; A trait's required functions (`fn area(&self) -> f64;`): signatures, symbols that calls
; through the trait resolve to, with no chunk of their own.
(trait_item
  body: (declaration_list
    (function_signature_item
      name: (identifier) @name) @definition.signature))

; `pub type Result<T> = std::result::Result<T, Error>;` in a module: a type alias, found and
; outlined, no chunk of its own (an impl's associated `type Output = X;` is none).
(source_file
  (type_item
    name: (type_identifier) @name) @definition.type_alias)

(mod_item
  body: (declaration_list
    (type_item
      name: (type_identifier) @name) @definition.type_alias))

; `pub const MAX_RETRIES: u32 = 3;`, `static NAME: &str = ...` in a module or an impl (an
; associated `Type::MAX`): constants, found and outlined, no chunk of their own.
(source_file
  [(const_item name: (identifier) @name) (static_item name: (identifier) @name)] @definition.constant)

(mod_item
  body: (declaration_list
    [(const_item name: (identifier) @name) (static_item name: (identifier) @name)] @definition.constant))

(impl_item
  body: (declaration_list
    (const_item name: (identifier) @name) @definition.constant))
