; Positional bases only: keyword arguments such as metaclass=Meta are not bases.
(class_definition
  superclasses: (argument_list
    [(identifier) (attribute)] @inherits.base)) @inherits.class

; Generic[T] and Base[int] inherit from the subscripted name.
(class_definition
  superclasses: (argument_list
    (subscript
      value: (_) @inherits.base))) @inherits.class
