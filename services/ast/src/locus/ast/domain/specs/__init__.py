"""One module per language besides Python, each exporting ``SPECS`` (a tuple of
``LanguageSpec``); the registry in ``languages.py`` finds them all, so adding a language adds a
module here and a ``queries/<language>/`` directory, nothing else."""

import importlib
import pkgutil

from locus.ast.domain.language_spec import LanguageSpec


def discovered_specs() -> tuple[LanguageSpec, ...]:
    specs: list[LanguageSpec] = []
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        specs.extend(getattr(module, "SPECS", ()))
    return tuple(specs)
