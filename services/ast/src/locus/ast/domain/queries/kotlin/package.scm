; package com.acme.billing
(package_header
  (identifier) @package.name)
