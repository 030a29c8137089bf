; namespace Acme.Billing;
(file_scoped_namespace_declaration
  name: (_) @package.name)
