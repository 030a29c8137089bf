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


@pytest.mark.parametrize(
    ("path", "role"),
    [
        # Java, Kotlin, Scala: Maven/Gradle test source sets and class-name conventions
        ("core/src/test/java/com/acme/OrderService.java", PathRole.TEST),
        ("core/src/integrationTest/java/com/acme/OrderFlow.java", PathRole.TEST),
        ("core/src/integration-test/kotlin/OrderFlow.kt", PathRole.TEST),
        ("core/src/testFixtures/java/com/acme/Orders.java", PathRole.TEST),
        ("core/src/main/java/com/acme/OrderServiceTests.java", PathRole.TEST),
        ("core/src/main/java/com/acme/OrderServiceIT.java", PathRole.TEST),
        ("core/src/main/scala/acme/OrderSpec.scala", PathRole.TEST),
        ("core/src/main/java/com/acme/Contest.java", PathRole.SOURCE),
        ("core/src/main/java/com/acme/testing/Clock.java", PathRole.TEST),
        ("src/_pytest/python.py", PathRole.SOURCE),  # a package, not a source set
        # Go
        ("pkg/orders/orders_test.go", PathRole.TEST),
        ("pkg/orders/testdata/order.json", PathRole.TEST),
        ("pkg/orders/testing.go", PathRole.SOURCE),
        # Rust: integration tests, unit-test modules, benches (a role of their own, de-ranked
        # like tests)
        ("tests/parse.rs", PathRole.TEST),
        ("crates/core/tests/it/main.rs", PathRole.TEST),
        ("src/parser/tests.rs", PathRole.TEST),
        ("src/parser/test.rs", PathRole.TEST),
        ("src/parser_test.rs", PathRole.TEST),
        ("benches/parse.rs", PathRole.BENCHMARK),
        ("src/latest.rs", PathRole.SOURCE),
        # JavaScript, TypeScript
        ("src/orders.test.ts", PathRole.TEST),
        ("src/orders.spec.mjs", PathRole.TEST),
        ("src/components/Cart.test.jsx", PathRole.TEST),
        ("src/__tests__/cart.ts", PathRole.TEST),
        ("src/__mocks__/axios.js", PathRole.TEST),
        ("lib/adapters/http.js", PathRole.SOURCE),
        # C#
        ("src/Shop.Tests/OrderServiceTests.cs", PathRole.TEST),
        ("src/Shop.UnitTests/Helpers.cs", PathRole.TEST),
        ("src/Shop.IntegrationTests/Fixture.cs", PathRole.TEST),
        ("src/Shop/OrderService.cs", PathRole.SOURCE),
        # PHP
        ("tests/Unit/RepoTest.php", PathRole.TEST),
        ("src/RepoTest.php", PathRole.TEST),
        ("src/Repo.php", PathRole.SOURCE),
        # Ruby
        ("spec/models/user_spec.rb", PathRole.TEST),
        ("lib/shop/user_spec.rb", PathRole.TEST),
        ("test/models/user_test.rb", PathRole.TEST),
        ("app/models/user.rb", PathRole.SOURCE),
        # C, C++
        ("test/parser.c", PathRole.TEST),
        ("tests/format-test.cc", PathRole.TEST),
        ("src/parser_test.cc", PathRole.TEST),
        ("src/parser_unittest.cc", PathRole.TEST),
        ("src/test_parser.c", PathRole.TEST),
        ("src/attest.c", PathRole.SOURCE),
        ("include/fmt/format.h", PathRole.SOURCE),
    ],
)
def test_test_conventions_of_every_language(path: str, role: PathRole) -> None:
    assert classify_path(path) == role
