; Every call; the callee is kept as written (helper, self.retry, os.path.join).
(call
  function: (_) @call.target)
