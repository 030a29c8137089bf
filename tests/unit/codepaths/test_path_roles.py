"""Path roles: what the ranking de-ranks (tests, docs, examples, vendored, generated code)."""

from __future__ import annotations

import pytest

from locus.codepaths import PathRole, classify_path

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/shop/orders.py", PathRole.SOURCE),
        ("services/gateway/src/locus/gateway/main.py", PathRole.SOURCE),
        ("README.txt", PathRole.DOCS),
        ("contest/entries.py", PathRole.SOURCE),
        ("latest/orders.go", PathRole.SOURCE),
        ("tests/test_orders.py", PathRole.TEST),
        ("src/shop/test_orders.py", PathRole.TEST),
        ("pkg/orders/orders_test.go", PathRole.TEST),
        ("web/src/orders.test.tsx", PathRole.TEST),
        ("web/src/__tests__/orders.js", PathRole.TEST),
        ("app/src/test/java/com/acme/OrderServiceTest.java", PathRole.TEST),
        ("conftest.py", PathRole.TEST),
        ("docs/orders.md", PathRole.DOCS),
        ("CHANGES", PathRole.DOCS),
        ("CHANGELOG.txt", PathRole.DOCS),
        ("LICENSE", PathRole.DOCS),
        ("src/shop/changes.py", PathRole.SOURCE),
        ("notes.txt", PathRole.SOURCE),
        ("CHANGELOG.md", PathRole.DOCS),
        ("guide/setup.rst", PathRole.DOCS),
        ("examples/quickstart.py", PathRole.EXAMPLE),
        ("samples/demo/main.go", PathRole.EXAMPLE),
        ("vendor/github.com/pkg/errors/errors.go", PathRole.VENDORED),
        ("web/node_modules/react/index.js", PathRole.VENDORED),
        ("third_party/zlib/inflate.c", PathRole.VENDORED),
        ("vendor/tests/test_x.py", PathRole.VENDORED),
        ("libs/contracts/src/locus/v1/gateway_pb2.py", PathRole.GENERATED),
        ("api/orders.pb.go", PathRole.GENERATED),
        ("static/app.min.js", PathRole.GENERATED),
        ("", PathRole.SOURCE),
    ],
)
def test_classify_path(path: str, role: PathRole) -> None:
    assert classify_path(path) == role


def test_windows_separators() -> None:
    assert classify_path("tests\\test_orders.py") == PathRole.TEST
