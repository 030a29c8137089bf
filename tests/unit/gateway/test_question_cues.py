"""Cues extracted from questions: identifiers, dotted names, paths, stack-trace frames and
markdown code spans; plain prose yields nothing."""

from __future__ import annotations

import pytest

from locus.gateway.domain.question_cues import extract_cues, looks_like_code
from locus.gateway.domain.stack_frames import StackFrame

pytestmark = pytest.mark.unit


def test_plain_prose_has_no_cues() -> None:
    cues = extract_cues("How does the shop decide that a payment was declined?")
    assert cues.is_empty
    assert not cues.about_tests


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("place_order", True),
        ("MAX_RETRIES", True),
        ("__init__", True),
        ("placeOrder", True),
        ("OrderService", True),
        ("HTTPServer", True),
        ("order", False),
        ("Order", False),
        ("API", False),
        ("_", False),
        ("__", False),
        ("x2", False),
    ],
)
def test_what_looks_like_code(token: str, expected: bool) -> None:
    assert looks_like_code(token) is expected


def test_identifiers_in_prose_must_look_like_code_or_be_called() -> None:
    cues = extract_cues("Why does place_order call chargeCard() and then save() on OrderService?")
    assert cues.identifiers == ("place_order", "chargeCard", "save", "OrderService")


def test_every_name_in_a_code_span_counts() -> None:
    cues = extract_cues("What does `refund` do, and where is `Payments.charge` used?")
    assert "refund" in cues.identifiers
    assert cues.dotted_names == ("Payments.charge",)
    assert "charge" in cues.identifiers  # the last part of a dotted name


def test_keywords_and_short_names_in_code_spans_are_ignored() -> None:
    cues = extract_cues("```python\nfor x in items:\n    return self.total\n```")
    assert cues.identifiers == ("total",)  # a plain word in a block counts only when called
    assert cues.dotted_names == ("self.total",)


def test_fenced_code_without_language_tag() -> None:
    cues = extract_cues("```charge_card(customer, amount)\nrefund(customer)```")
    assert cues.identifiers == ("charge_card", "refund")


def test_plain_words_of_logs_in_a_code_block_are_not_names() -> None:
    cues = extract_cues("```\nImportError while loading conftest\nNo module named 'python'\n```")
    assert "module" not in cues.identifiers
    assert "named" not in cues.identifiers
    assert "ImportError" in cues.identifiers


def test_dotted_names_and_paths_are_told_apart() -> None:
    cues = extract_cues(
        "Is shop.orders.OrderService.place_order in src/shop/orders.py or in orders.py? "
        "See also config.yaml, e.g. the retries, and response.json() handling."
    )
    assert cues.dotted_names == ("shop.orders.OrderService.place_order", "response.json")
    assert cues.paths == ("src/shop/orders.py", "orders.py", "config.yaml")


def test_paths_need_an_extension_or_two_slashes() -> None:
    cues = extract_cues("and/or either way, look in services/gateway/src and ./tests/test_x.py")
    assert cues.paths == ("services/gateway/src", "tests/test_x.py")


def test_urls_are_not_paths() -> None:
    cues = extract_cues("The docs at https://example.com/docs/api/orders.py say otherwise")
    assert cues.paths == ()


def test_python_stack_trace_frames() -> None:
    question = """It crashes:
```
Traceback (most recent call last):
  File "/home/ci/work/shop/src/shop/orders.py", line 18, in place_order
    charge_card(customer_id, total)
  File "/home/ci/work/shop/src/shop/payments.py", line 10, in charge_card
    raise PaymentDeclined(f"invalid amount {amount}")
shop.payments.PaymentDeclined: invalid amount 0
```"""
    cues = extract_cues(question)
    assert cues.frames == (
        StackFrame("/home/ci/work/shop/src/shop/orders.py", 18, "place_order"),
        StackFrame("/home/ci/work/shop/src/shop/payments.py", 10, "charge_card"),
    )
    assert "/home/ci/work/shop/src/shop/orders.py" in cues.paths
    assert "PaymentDeclined" in cues.identifiers
    assert "shop.payments.PaymentDeclined" in cues.dotted_names
    assert cues.lookup_names(3) == ["place_order", "charge_card", "shop.payments.PaymentDeclined"]


def test_jvm_node_and_file_line_frames() -> None:
    cues = extract_cues(
        "at com.acme.orders.OrderService.place(OrderService.java:42)\n"
        "    at placeOrder (/srv/app/src/orders.js:10:5)\n"
        "    at /srv/app/src/index.js:3:1\n"
        "panic in cmd/server/main.go:12 +0x1d"
    )
    assert cues.frames == (
        StackFrame("OrderService.java", 42, "place", "com.acme.orders.OrderService"),
        StackFrame("/srv/app/src/orders.js", 10, "placeOrder"),
        StackFrame("/srv/app/src/index.js", 3, ""),
        StackFrame("cmd/server/main.go", 12, ""),
    )


def test_questions_about_tests() -> None:
    assert extract_cues("Which tests cover refunds?").about_tests
    assert extract_cues("is test_place_order flaky").about_tests
    assert extract_cues("what does tests/test_orders.py check").about_tests
    assert not extract_cues("what is the latest order status").about_tests
    assert not extract_cues("how do contest entries get scored").about_tests


def test_cues_are_unique_and_bounded() -> None:
    question = " ".join(f"name_{i} name_{i}" for i in range(100))
    cues = extract_cues(question)
    assert len(cues.identifiers) == 32
    assert len(set(cues.identifiers)) == 32
    assert cues.identifiers[0] == "name_0"


def test_imports_and_dotted_names_become_module_paths() -> None:
    cues = extract_cues(
        "```python\nfrom astropy.io.fits import card, Card\nimport numpy.linalg as la\n```\n"
        "then `sympy.core.numbers.Float` breaks, while self.value and np.array do not matter"
    )
    assert "astropy/io/fits" in cues.module_paths
    assert "astropy/io/fits/card" in cues.module_paths  # a lower-case name may be a module
    assert "astropy/io/fits/Card" not in cues.module_paths
    assert "numpy/linalg" in cues.module_paths
    assert "sympy/core/numbers" in cues.module_paths
    assert not any(p.startswith("self/") for p in cues.module_paths)


def test_words_hold_identifier_parts_lower_cased() -> None:
    cues = extract_cues("HTTPClient retries in upload_file")
    assert {"httpclient", "http", "client", "retries", "upload_file", "upload", "file"} <= (
        cues.words
    )


def test_a_bug_report_that_mentions_tests_in_passing_is_not_about_tests() -> None:
    report = (
        "Make the tool XDG compliant. I have this annoying `.tool.d` directory in my home "
        "folder; it stores data that belongs in $HOME/.local/share. "
        * 3
        + "I ran the test suite and pytest passes, but the directory keeps coming back."
    )
    assert len(report) > 300
    assert not extract_cues(report).about_tests
    assert extract_cues(report + " Which tests should cover the new location?").about_tests


def test_links_to_code_hosts_name_a_file_and_a_line() -> None:
    cues = extract_cues(
        "The count is computed here: https://github.com/acme/shop/blob/1be777fe/src/shop/"
        "orders.py#L35 (see also https://gitlab.example/acme/shop/-/blob/main/src/shop/api.py "
        "and https://github.com/acme/shop/issues/12)"
    )
    assert StackFrame("src/shop/orders.py", 35) in cues.frames
    assert "src/shop/api.py" in cues.paths
    assert not any("issues" in p for p in cues.paths)


def test_names_in_the_title_of_a_report_are_marked() -> None:
    cues = extract_cues(
        "`polyval` with timedelta64 coordinates gives wrong results\n\n"
        "Calling `polyval(coord, coeffs)` and then `xr.DataArray.sortby` fails."
    )
    assert cues.in_title == {"polyval"}
    assert "sortby" in cues.identifiers
    # a one-line question has no title apart from itself
    assert extract_cues("why does `polyval` fail?").in_title == frozenset()


def test_questions_about_the_documentation() -> None:
    assert extract_cues("What does the documentation say about upgrading?").about_docs
    assert extract_cues("is retrying documented anywhere").about_docs
    assert extract_cues("how do the docs describe refunds").about_docs
    assert extract_cues("what does the README say about setup").about_docs
    assert extract_cues("where in the user guide are refunds explained").about_docs
    # Code questions, even with doc-like words in them.
    assert not extract_cues("where is the upgrade check implemented?").about_docs
    assert not extract_cues("parse the docstring of a function").about_docs
    assert not extract_cues("where is the manual retry triggered").about_docs
    # A bug report names the docs in passing (what they promise, a link) and still asks where
    # to change the code; only asking outright makes a long question about the docs.
    report = (
        "Rolling back fails with KeyError\n\nThe docs say rollback restores the last release "
        "(see https://docs.example.com/rollback), but it raises:\n" + "KeyError: 'release'\n" * 20
    )
    assert not extract_cues(report).about_docs
    assert extract_cues(report + "\nWhat does the documentation say about rollbacks?").about_docs
    assert not extract_cues("Crash, see https://docs.python.org/3/whatsnew/3.12.html").about_docs
