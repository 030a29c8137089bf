; Variables whose type is known where they are declared, so a call on one is a method of that
; class: `const s = new Server(...)`.
(variable_declarator
  name: (identifier) @local.name
  value: (new_expression
    constructor: [(identifier) (member_expression)] @local.type))
