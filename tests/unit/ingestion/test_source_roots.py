"""Source-root detection on constructed trees, on malformed layout files, and on this repository
(whose Python files must be named `locus.…` by the ast service's naming)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from required import unavailable

from locus.ast.domain import language_spec, module_name_for_path
from locus.ingestion.domain.source_roots import (
    NO_SOURCE_ROOT,
    PackageAlias,
    SourceRoot,
    SourceRoots,
    detect_source_roots,
    layout_files_to_read,
    may_move_roots,
    rerooted_paths,
)

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[3]


def detect(paths: list[str], layout_files: dict[str, str] | None = None) -> SourceRoots:
    layout_files = layout_files or {}
    return detect_source_roots([*paths, *layout_files], layout_files)


def python_module(roots: SourceRoots, path: str) -> str:
    """The module name the ast service gives `path` with the detected root."""
    root = roots.root_of(path, "python")
    return module_name_for_path(path, "python", language_spec.SourceRoot(root.directory, root.name))


# Python


def test_a_monorepo_of_src_layouts_names_modules_from_each_projects_src() -> None:
    roots = detect(
        [
            "libs/cli/src/locus/cli/__init__.py",
            "libs/cli/src/locus/cli/client.py",
            "services/ast/src/locus/ast/domain/extraction.py",
            "services/ast/src/locus/ast/__init__.py",
            "tests/unit/ast/test_chunks.py",
            "bench/run.py",
        ]
    )

    assert roots.root_of("libs/cli/src/locus/cli/client.py", "python") == SourceRoot("libs/cli/src")
    assert python_module(roots, "libs/cli/src/locus/cli/client.py") == "locus.cli.client"
    assert python_module(roots, "libs/cli/src/locus/cli/__init__.py") == "locus.cli"
    assert (
        python_module(roots, "services/ast/src/locus/ast/domain/extraction.py")
        == "locus.ast.domain.extraction"
    )
    # Outside every root the old naming applies: the path from the source.
    assert roots.root_of("tests/unit/ast/test_chunks.py", "python") == NO_SOURCE_ROOT
    assert python_module(roots, "tests/unit/ast/test_chunks.py") == "tests.unit.ast.test_chunks"


def test_a_src_directory_that_is_itself_a_package_is_not_a_root() -> None:
    roots = detect(["app/src/__init__.py", "app/src/models/user.py"])

    assert roots.root_of("app/src/models/user.py", "python") == NO_SOURCE_ROOT
    assert python_module(roots, "app/src/models/user.py") == "app.src.models.user"


def test_package_directories_declared_by_project_files_are_roots() -> None:
    roots = detect(
        ["a/code/alpha/core.py", "b/lib/beta/core.py", "c/python/gamma/core.py", "d/x/d.py"],
        {
            "a/pyproject.toml": '[project]\nname = "alpha"\n'
            '[tool.setuptools.package-dir]\n"" = "code"\n',
            "b/setup.cfg": "[metadata]\nname = beta\n[options]\npackage_dir =\n    =lib\n",
            "c/setup.py": "from setuptools import setup, find_packages\n"
            'setup(name="gamma", package_dir={"": "python"}, '
            'packages=find_packages(where="python"))\n',
            "d/pyproject.toml": '[tool.poetry]\nname = "delta"\n'
            'packages = [{ include = "x", from = "." }]\n',
        },
    )

    assert python_module(roots, "a/code/alpha/core.py") == "alpha.core"
    assert python_module(roots, "b/lib/beta/core.py") == "beta.core"
    assert python_module(roots, "c/python/gamma/core.py") == "gamma.core"
    assert python_module(roots, "d/x/d.py") == "x.d"


def test_a_flat_project_is_rooted_at_its_project_file_and_tool_only_files_are_ignored() -> None:
    roots = detect(
        ["tools/lint/checker/rules.py", "docs/conf/sphinx.py"],
        {
            "tools/lint/pyproject.toml": '[project]\nname = "checker"\n',
            "docs/pyproject.toml": "[tool.ruff]\nline-length = 100\n",
        },
    )

    assert python_module(roots, "tools/lint/checker/rules.py") == "checker.rules"
    assert roots.root_of("docs/conf/sphinx.py", "python") == NO_SOURCE_ROOT


def test_a_module_named_setup_py_inside_a_package_is_not_a_project_file() -> None:
    roots = detect(
        ["libs/telemetry/src/locus/telemetry/metrics.py"],
        {"libs/telemetry/src/locus/telemetry/setup.py": "def setup(settings):\n    return 1\n"},
    )

    assert (
        python_module(roots, "libs/telemetry/src/locus/telemetry/setup.py")
        == "locus.telemetry.setup"
    )


# JVM, Go, Rust, JS/TS, C#, PHP, Ruby


def test_maven_and_gradle_source_sets_at_any_depth_are_jvm_roots() -> None:
    roots = detect([])

    assert roots.root_of("billing/src/main/java/com/acme/billing/Invoice.java", "java") == (
        SourceRoot("billing/src/main/java")
    )
    assert roots.root_of("src/test/java/com/acme/InvoiceTest.java", "java") == SourceRoot(
        "src/test/java"
    )
    assert roots.root_of("app/src/main/kotlin/acme/App.kt", "kotlin") == SourceRoot(
        "app/src/main/kotlin"
    )
    assert roots.root_of("a/src/main/java/src/main/scala/acme/A.scala", "scala") == SourceRoot(
        "a/src/main/java/src/main/scala"
    )
    assert roots.root_of("legacy/com/acme/Old.java", "java") == NO_SOURCE_ROOT


def test_the_nearest_go_mod_roots_go_files_with_its_module_path() -> None:
    roots = detect(
        ["shop/billing/invoice.go", "shop/tools/gen/main.go", "shop/main.go"],
        {
            "shop/go.mod": "// the shop\nmodule github.com/acme/shop\n\ngo 1.22\n",
            "shop/tools/go.mod": 'module "github.com/acme/shop/tools" // separate\n',
        },
    )

    assert roots.root_of("shop/billing/invoice.go", "go") == SourceRoot(
        "shop", "github.com/acme/shop"
    )
    assert roots.root_of("shop/main.go", "go") == SourceRoot("shop", "github.com/acme/shop")
    assert roots.root_of("shop/tools/gen/main.go", "go") == SourceRoot(
        "shop/tools", "github.com/acme/shop/tools"
    )
    assert roots.root_of("shop/billing/invoice.py", "python") == NO_SOURCE_ROOT


def test_files_whose_root_a_layout_change_moves_are_named_again() -> None:
    files = {
        "shop/billing/invoice.go": "go",
        "shop/tools/gen/main.go": "go",
        "web/src/app.ts": "typescript",
        "web/README.md": "markdown",
    }
    before = detect(
        list(files),
        {
            "shop/go.mod": "module github.com/acme/shop\n",
            "shop/tools/go.mod": "module github.com/acme/tools\n",
            "web/package.json": '{"name": "@acme/web"}',
        },
    )
    # The shop's module path changes; web's package.json only gains a script.
    after = detect(
        list(files),
        {
            "shop/go.mod": "module github.com/acme/store\n",
            "shop/tools/go.mod": "module github.com/acme/tools\n",
            "web/package.json": '{"name": "@acme/web", "scripts": {"build": "tsc"}}',
        },
    )
    assert rerooted_paths(before, after, files) == ["shop/billing/invoice.go"]
    assert rerooted_paths(before, before, files) == []

    # Only a file that comes or goes, or a new version of a layout file, can move roots.
    assert may_move_roots("shop/billing/invoice.go", added_or_deleted=True)
    assert may_move_roots("web/package.json", added_or_deleted=False)
    assert may_move_roots("libs/billing/pyproject.toml", added_or_deleted=False)
    assert not may_move_roots("shop/billing/invoice.go", added_or_deleted=False)
    assert not may_move_roots("web/README.md", added_or_deleted=False)


def test_cargo_packages_root_rust_files_with_the_crate_name_and_workspaces_do_not() -> None:
    roots = detect(
        ["crates/shop-core/src/lib.rs", "crates/shop-core/src/billing/mod.rs", "src/main.rs"],
        {
            "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
            "crates/shop-core/Cargo.toml": '[package]\nname = "shop-core"\nversion = "0.1.0"\n',
        },
    )

    assert roots.root_of("crates/shop-core/src/billing/mod.rs", "rust") == SourceRoot(
        "crates/shop-core", "shop_core"
    )
    assert roots.root_of("src/main.rs", "rust") == NO_SOURCE_ROOT


def test_package_json_csproj_composer_and_gem_directories_are_roots() -> None:
    roots = detect(
        [
            "web/src/app.tsx",
            "web/src/util.js",
            "server/Billing/Invoice.cs",
            "server/Billing/Billing.csproj",
            "php/src/Invoice.php",
            "gems/shop/Gemfile",
            "gems/shop/shop.gemspec",
            "gems/shop/lib/shop/cart.rb",
        ],
        {
            "web/package.json": '{"name": "@acme/web", "private": true}',
            "php/composer.json": '{"name": "acme/billing"}',
        },
    )

    assert roots.root_of("web/src/app.tsx", "tsx") == SourceRoot("web", "@acme/web")
    assert roots.root_of("web/src/util.js", "javascript") == SourceRoot("web", "@acme/web")
    assert roots.root_of("server/Billing/Invoice.cs", "csharp") == SourceRoot(
        "server/Billing", "Billing"
    )
    assert roots.root_of("php/src/Invoice.php", "php") == SourceRoot("php", "acme/billing")
    assert roots.root_of("gems/shop/lib/shop/cart.rb", "ruby") == SourceRoot("gems/shop", "shop")
    assert roots.root_of("server/Billing/Invoice.c", "c") == NO_SOURCE_ROOT


def test_a_js_package_names_its_entry_and_its_tsconfig_path_aliases() -> None:
    paths = [
        "packages/ui/src/index.ts",
        "packages/ui/src/theme.ts",
        "packages/sdk/src/objects/index.ts",
        "packages/cli/lib/main.mjs",
        "packages/flat/index.js",
        "packages/none/README.md",
        "app/src/main.tsx",
    ]
    roots = detect(
        paths,
        {
            # A build output in `main`: the source it is built from.
            "packages/ui/package.json": '{"name": "@acme/ui", "main": "dist/index.js", '
            '"types": "dist/index.d.ts"}',
            # tsconfig's dialect: comments and trailing commas; targets go through baseUrl.
            "packages/ui/tsconfig.json": '{\n  // aliases\n  "compilerOptions": {\n'
            '    "baseUrl": "./src", /* below the package */\n'
            '    "paths": {"@/*": ["./*"], "#theme": ["theme.ts"], "up/*": ["../../x/*"],},\n'
            "  },\n}",
            "packages/sdk/package.json": '{"name": "sdk", "main": "src/objects/index.ts"}',
            "packages/cli/package.json": '{"name": "cli", "exports": {".": {"import": '
            '{"types": "./types/main.d.mts", "default": "./lib/main.mjs"}}}}',
            "packages/flat/package.json": '{"name": "flat"}',
            "packages/none/package.json": '{"name": "none", "main": "dist/none.js"}',
            "app/package.json": '{"name": "app"}',
            "app/jsconfig.json": '{"compilerOptions": {"paths": {"~/*": ["src/*"]}}}',
        },
    )

    ui = roots.root_of("packages/ui/src/theme.ts", "typescript")
    assert ui == SourceRoot(
        "packages/ui",
        "@acme/ui",
        "src/index.ts",
        # `paths` first, then what `baseUrl` alone resolves: the files below it.
        (
            ("@/*", ("src/*",)),
            ("#theme", ("src/theme.ts",)),
            ("index", ("src/index.ts",)),
            ("theme", ("src/theme.ts",)),
        ),
        # Outside the package, in no other: named by its path there.
        (PackageAlias("up/*", ("packages/x/*",), NO_SOURCE_ROOT),),
    )
    assert roots.root_of("packages/sdk/src/objects/index.ts", "typescript").entry == (
        "src/objects/index.ts"
    )
    # `exports` conditions, nested; the declaration file maps to the source beside it.
    assert roots.root_of("packages/cli/lib/main.mjs", "javascript").entry == "lib/main.mjs"
    assert roots.root_of("packages/flat/index.js", "javascript").entry == "index.js"
    assert roots.root_of("packages/none/x.js", "javascript").entry == ""
    assert roots.root_of("app/src/main.tsx", "tsx").aliases == (("~/*", ("src/*",)),)


def test_tsconfig_extends_and_base_url_give_the_aliases_typescript_resolves() -> None:
    paths = [
        "web/src/app.tsx",
        "lib/src/index.ts",
        "app/src/index.js",
        "app/src/components/button.jsx",
        "app/src/components/index.js",
        "app/src/utils.js",
        "app/src/types.d.ts",
        "app/src/.storybook/preview.js",
        "app/src/dist/bundle.js",
        "app/README.md",
    ]
    layout = {
        # A root base config (Nx, Turborepo): baseUrl and paths relative to it.
        "tsconfig.base.json": '{"compilerOptions": {"paths": {"@lib": ["lib/src/index.ts"], '
        '"~/*": ["web/src/*"], "@app/*": ["app/src/*"], "@acme/app": ["app/src/index.js"]}}}',
        "web/package.json": '{"name": "web"}',
        "web/tsconfig.json": '{"extends": "../tsconfig.base.json", '
        '"compilerOptions": {"strict": true}}',
        "app/package.json": '{"name": "app"}',
        "app/jsconfig.json": '{"compilerOptions": {"baseUrl": "src"}}',
    }
    assert layout_files_to_read([*paths, *layout]) == sorted(layout)
    assert not layout_files_to_read(["web/tsconfig-paths.js", "web/my.tsconfig.json"])
    roots = detect(paths, layout)

    # Inherited through `extends`, relative to the config that sets `paths` (the root). A
    # target in another package is named by that package (app's entry is `app` itself); one in
    # no package by its path.
    web = roots.root_of("web/src/app.tsx", "tsx")
    assert web.aliases == (("~/*", ("src/*",)),)
    app = SourceRoot("app", "app", "src/index.js")
    assert web.package_aliases == (
        PackageAlias("@lib", ("lib/src/index.ts",), NO_SOURCE_ROOT),
        PackageAlias("@app/*", ("app/src/*",), app),
        PackageAlias("@acme/app", ("app/src/index.js",), app),
    )
    # baseUrl alone: each top-level source file and directory below it, no declarations,
    # hidden or build directories.
    assert roots.root_of("app/src/utils.js", "javascript").aliases == (
        ("components/*", ("src/components/*",)),
        ("components", ("src/components",)),
        ("index", ("src/index.js",)),
        ("utils", ("src/utils.js",)),
    )


def test_an_alias_from_the_top_package_into_a_workspace_package_is_that_packages() -> None:
    roots = detect(
        ["scripts/build.ts", "src/main.ts", "packages/ui/src/index.ts"],
        {
            "package.json": '{"name": "acme", "workspaces": ["packages/*"]}',
            "tsconfig.json": '{"compilerOptions": {"paths": {'
            '"@acme/ui": ["packages/ui/src/index.ts"], "~/*": ["src/*"]}}}',
            "packages/ui/package.json": '{"name": "@acme/ui"}',
        },
    )
    top = roots.root_of("scripts/build.ts", "typescript")
    # Below the top package's directory, but in another package: named by that one.
    assert top.aliases == (("~/*", ("src/*",)),)
    assert top.package_aliases == (
        PackageAlias(
            "@acme/ui",
            ("packages/ui/src/index.ts",),
            SourceRoot("packages/ui", "@acme/ui", "src/index.ts"),
        ),
    )


# Malformed layout files: logged and ignored, never an error.


def test_malformed_layout_files_are_ignored_and_detection_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    roots = detect(
        [
            "svc/src/svc/app.py",
            "go/broken/x.go",
            "go/x.go",
            "rust/src/lib.rs",
            "web/index.js",
            "py/pkg/mod.py",
        ],
        {
            "svc/pyproject.toml": "[project\nname = ",
            "go/go.mod": "module github.com/acme/outer\n",
            "go/broken/go.mod": "go 1.22\n",  # no module line
            "rust/Cargo.toml": "[package]\nname = 3 = 4\n",
            "web/package.json": "{not json",
            "py/setup.cfg": "no section header\n",
            "py/pyproject.toml": '[project]\nname = "p"\n[tool.setuptools.package-dir]\n'
            '"" = "../outside"\n',
            "deep/package.json": "[" * 100_000,
        },
    )

    # The structural src layout still applies without its pyproject.toml.
    assert python_module(roots, "svc/src/svc/app.py") == "svc.app"
    assert roots.root_of("go/broken/x.go", "go") == SourceRoot("go", "github.com/acme/outer")
    assert roots.root_of("rust/src/lib.rs", "rust") == NO_SOURCE_ROOT
    assert roots.root_of("web/index.js", "javascript") == SourceRoot("web", "")
    assert roots.root_of("py/pkg/mod.py", "python") == NO_SOURCE_ROOT
    assert roots.root_of("deep/a.js", "javascript") == SourceRoot("deep", "")
    logged = caplog.text
    for path in ("svc/pyproject.toml", "go/broken/go.mod", "rust/Cargo.toml", "web/package.json"):
        assert path in logged
    assert "py/pyproject.toml" in logged  # a package-dir outside the project


def test_only_layout_files_are_read() -> None:
    paths = ["a/pyproject.toml", "a/src/a/x.py", "go.mod", "b/package.json", "b/Gemfile"]

    assert layout_files_to_read(paths) == ["a/pyproject.toml", "b/package.json", "go.mod"]
    assert layout_files_to_read(["web/tsconfig.json", "web/jsconfig.json", "web/x.json"]) == [
        "web/jsconfig.json",
        "web/tsconfig.json",
    ]


# This repository


def test_this_repositorys_python_files_get_locus_module_names() -> None:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        unavailable("git and this repository's checkout", "no git, or no .git here")
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    started = time.perf_counter()
    layout_files = {
        path: (REPO_ROOT / path).read_text(encoding="utf-8")
        for path in layout_files_to_read(listed)
        if (REPO_ROOT / path).is_file()
    }
    roots = detect_source_roots(listed, layout_files)
    elapsed = time.perf_counter() - started

    client = "libs/cli/src/locus/cli/client.py"
    assert client in listed
    assert roots.root_of(client, "python") == SourceRoot("libs/cli/src")
    assert python_module(roots, client) == "locus.cli.client"
    python_files = [path for path in listed if path.endswith(".py")]
    for path in python_files:
        if path.startswith(("libs/", "services/")) and "/src/locus/" in path:
            assert python_module(roots, path).startswith("locus."), path
    assert elapsed < 2.0
