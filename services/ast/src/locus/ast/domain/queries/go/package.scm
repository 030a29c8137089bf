; package billing (an external test package: package billing_test)
(package_clause
  (package_identifier) @package.name)
