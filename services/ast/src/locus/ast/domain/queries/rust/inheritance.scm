; `impl Trait for Type`: the type (the impl block names it) inherits from the trait.
(impl_item
  trait: [(type_identifier) (scoped_type_identifier)] @inherits.base
  type: (_)) @inherits.class

(impl_item
  trait: (generic_type
    type: [(type_identifier) (scoped_type_identifier)] @inherits.base)
  type: (_)) @inherits.class

; Supertraits: `trait Priced: Named + fmt::Display`.
(trait_item
  bounds: (trait_bounds
    [(type_identifier) (scoped_type_identifier)] @inherits.base)) @inherits.class

(trait_item
  bounds: (trait_bounds
    (generic_type
      type: [(type_identifier) (scoped_type_identifier)] @inherits.base))) @inherits.class
