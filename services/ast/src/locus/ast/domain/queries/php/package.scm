; namespace App\Http\Controllers;  (also the braced form; the first declaration wins)
(namespace_definition
  name: (namespace_name) @package.name)
