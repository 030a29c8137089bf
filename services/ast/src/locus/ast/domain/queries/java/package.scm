; package com.acme.billing;
(package_declaration
  [(scoped_identifier) (identifier)] @package.name)
