; helper(), \App\Support\helper()
(function_call_expression
  function: [(name) (qualified_name)] @call.target)

; $this->save(), $user?->save(): the callee ends with the method name, before the arguments.
(member_call_expression
  name: (_) @call.last) @call.target

(nullsafe_member_call_expression
  name: (_) @call.last) @call.target

; User::find(), self::make(), static::create()
(scoped_call_expression
  name: (_) @call.last) @call.target

; new User(...) calls the class.
(object_creation_expression
  [(name) (qualified_name)] @call.last) @call.target
