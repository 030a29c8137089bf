import pytest

from locus.ast.domain import UnsupportedLanguage, module_name_for_path
from locus.ast.domain.python_language import resolve_python_import

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("relative_path", "module_name"),
    [
        ("pkg/sub/mod.py", "pkg.sub.mod"),
        ("pkg/__init__.py", "pkg"),
        ("src/pkg/mod.py", "pkg.mod"),
        ("lib/pkg/__init__.py", "pkg"),
        ("mod.py", "mod"),
        ("stubs/types.pyi", "stubs.types"),
        ("./pkg/mod.py", "pkg.mod"),
        ("pkg\\windows\\mod.py", "pkg.windows.mod"),
        ("services/api/src/app.py", "services.api.src.app"),
        ("src/__init__.py", "src"),
        ("src/src.py", "src"),
    ],
)
def test_module_name_for_path(relative_path: str, module_name: str) -> None:
    assert module_name_for_path(relative_path) == module_name


def test_module_name_for_path_needs_a_supported_language() -> None:
    with pytest.raises(UnsupportedLanguage):
        module_name_for_path("Main.hs", "haskell")


@pytest.mark.parametrize(
    ("written", "module_name", "is_package", "absolute"),
    [
        ("os.path", "pkg.mod", False, "os.path"),
        (".util", "pkg.mod", False, "pkg.util"),
        (".util", "pkg", True, "pkg.util"),
        (".", "pkg.mod", False, "pkg"),
        ("..", "pkg.sub.mod", False, "pkg"),
        ("..core.api", "pkg.sub", True, "pkg.core.api"),
        ("..", "pkg.mod", False, None),
        (".", "mod", False, None),
    ],
)
def test_relative_imports_resolve_like_the_import_system(
    written: str, module_name: str, is_package: bool, absolute: str | None
) -> None:
    assert resolve_python_import(written, module_name, is_package) == absolute
