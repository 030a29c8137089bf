; package com.acme.billing
(package_clause
  name: (package_identifier) @package.name)
