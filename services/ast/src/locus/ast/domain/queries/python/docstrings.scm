; The first statement of a module, class or function body, when it is a string literal.
(module . (comment)* . (string) @docstring)

(class_definition
  body: (block . (comment)* . (string) @docstring))

(function_definition
  body: (block . (comment)* . (string) @docstring))
