"""The strict JUnit parser, on real pytest reports and on hostile XML."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from orchestrator.tasks.junit import JunitCaps, ReportError, mangle, parse_junit

from .conftest import run_pytest

F = "tests/test_sample.py"


def test_real_pytest_report_maps_every_node_id(sample_report) -> None:
    code, xml = sample_report
    assert code == 1
    r = parse_junit(xml)
    expect = {
        f"{F}::test_ok": "passed",
        f"{F}::test_fails": "failed",
        f"{F}::test_param[1 Byte]": "passed",
        f"{F}::test_param[a::b]": "passed",
        f"{F}::test_param[x[y]]": "passed",
        f"{F}::test_param[\\xe9 \\xfc]": "passed",   # pytest escapes non-ASCII in parametrize ids
        f"{F}::test_param[]": "passed",
        f"{F}::test_skipped": "skipped",
        f"{F}::test_xfail": "skipped",
        f"{F}::test_setup_error": "error",
        f"{F}::test_teardown_error": "error",
        f"{F}::TestGroup::test_in_class": "passed",
        f"{F}::TestGroup::TestNested::test_deep": "passed",
    }
    assert {i: r.outcome_of(i) for i in expect} == expect
    assert r.outcome_of(f"{F}::test_absent") is None
    assert r.counts == {"passed": 8, "failed": 1, "error": 2, "skipped": 2}
    assert not r.collection_errors
    failed = next(c for c in r.cases if c.name == "test_fails")
    assert "arithmetic is broken" in failed.message and failed.seconds is not None


def test_collection_error_is_listed(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ok.py").write_text("def test_a():\n    pass\n")
    (tmp_path / "tests" / "test_broken.py").write_text("import no_such_module_here\n")
    code, xml = run_pytest(tmp_path, "tests")
    assert code == 2
    r = parse_junit(xml)
    assert r.collection_errors == ["tests.test_broken"]
    assert r.outcome_of("tests/test_ok.py::test_a") is None   # the session stopped before running it


def test_mangle_matches_pytest_rule() -> None:
    assert mangle("tests/test_x.py::test_a") == ("tests.test_x", "test_a")
    assert mangle("tests/sub/test_x.py::C::D::t[a.b/c::d]") == ("tests.sub.test_x.C.D", "t[a.b/c::d]")
    assert mangle("test_root.py::t") == ("test_root", "t")


def _doc(body: str) -> bytes:
    return f'<?xml version="1.0" encoding="utf-8"?>{body}'.encode()


CASE = '<testsuites><testsuite name="pytest"><testcase classname="a" name="t"/></testsuite></testsuites>'


@pytest.mark.parametrize(("xml", "reason", "fragment"), [
    (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
     b'<testsuites>&lol2;</testsuites>', "forbidden", "DOCTYPE"),
    (b'<?xml version="1.0"?><!DOCTYPE x SYSTEM "file:///etc/passwd"><testsuites/>', "forbidden", "DOCTYPE"),
    (b'<testsuites><testsuite><testcase classname="a" name="&xxe;"/></testsuite></testsuites>', "malformed",
     "undefined entity"),
    (b'<?xml version="1.0"?><?xml-stylesheet href="x"?><testsuites/>', "forbidden", "processing instruction"),
    (_doc("<testsuites><testsuite><testcase classname='a' name='t'><blah/></testcase></testsuite></testsuites>"),
     "malformed", "unknown element"),
    (_doc("<testsuites><testcase classname='a' name='t'/></testsuites>"), "malformed", "inside <testsuites>"),
    (_doc("<testsuites><testsuite><testcase name='t'/></testsuite></testsuites>"), "malformed", "without name"),
    (_doc("<testsuites/><testsuites/>"), "malformed", "not well-formed"),
    (b"", "malformed", "empty"),
    (b"not xml at all", "malformed", "not well-formed"),
    (b'<?xml version="1.0" encoding="latin-1"?><testsuites/>', "malformed", "only UTF-8"),
    (_doc("<testsuites><testsuite><testcase classname='a' name='t' time='soon'/></testsuite></testsuites>"),
     "malformed", "time"),
])
def test_hostile_or_broken_reports_are_refused(xml: bytes, reason: str, fragment: str) -> None:
    with pytest.raises(ReportError) as exc:
        parse_junit(xml)
    assert exc.value.reason == reason and fragment in str(exc.value)


def test_caps_refuse_big_deep_and_wide_documents_quickly() -> None:
    huge_attr = _doc(f"<testsuites><testsuite name='{'A' * (2 << 20)}'/></testsuites>")
    with pytest.raises(ReportError, match="too_large: attribute name"):
        parse_junit(huge_attr, JunitCaps(max_bytes=8 << 20, max_attribute_bytes=1 << 20))
    with pytest.raises(ReportError, match="too_large: .* bytes"):
        parse_junit(huge_attr, JunitCaps(max_bytes=1 << 20))
    deep = _doc("<testsuites><testsuite><testcase classname='a' name='t'><failure>" + "<failure>" * 3
                + "</failure>" * 4 + "</testcase></testsuite></testsuites>")
    with pytest.raises(ReportError, match="malformed"):
        parse_junit(deep)
    many = _doc("<testsuites><testsuite>" + "<testcase classname='a' name='t'/>" * 2000 + "</testsuite></testsuites>")
    with pytest.raises(ReportError, match="too_large: more than 1000 elements"):
        parse_junit(many, JunitCaps(max_elements=1000))
    nesting = _doc("<testsuites>" * 100_000)
    start = time.monotonic()
    with pytest.raises(ReportError):
        parse_junit(nesting)
    assert time.monotonic() - start < 1.0


def test_duplicates_keep_the_worst_outcome() -> None:
    xml = _doc("<testsuites><testsuite>"
               "<testcase classname='m' name='t'/>"
               "<testcase classname='m' name='t'><failure message='no'/></testcase>"
               "<testcase classname='m' name='t'/>"
               "</testsuite></testsuites>")
    r = parse_junit(xml)
    assert r.outcome_of("m.py::t") == "failed" and r.duplicates == 2


def test_a_bare_testsuite_root_is_accepted() -> None:
    r = parse_junit(_doc("<testsuite><testcase classname='m' name='t'><skipped/></testcase></testsuite>"))
    assert r.outcome_of("m.py::t") == "skipped"
    assert parse_junit(_doc(CASE)).outcome_of("a.py::t") == "passed"


def test_xunit1_reports_give_back_node_ids(tmp_path: Path) -> None:
    from .conftest import SAMPLE

    (tmp_path / "tests" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "sub" / "test_s.py").write_text(SAMPLE)
    code, xml = run_pytest(tmp_path, "-o", "junit_family=xunit1", "tests")
    r = parse_junit(xml)
    ids = {c.nodeid(): c.outcome for c in r.cases}
    assert None not in ids
    f = "tests/sub/test_s.py"
    assert ids[f"{f}::TestGroup::TestNested::test_deep"] == "passed"
    assert ids[f"{f}::test_param[x[y]]"] == "passed" and ids[f"{f}::test_fails"] == "failed"
    assert all(r.outcome_of(i) == o for i, o in ids.items())


def test_a_class_collected_in_another_module_is_named_by_the_tree(tmp_path: Path) -> None:
    """pytest writes the defining file for an imported test class; the tree tells the collecting one."""
    from orchestrator.tasks.grade_tree import nodeid_in_tree

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "test_base.py").write_text("class TestBlocks:\n    def test_x(self):\n        pass\n")
    (tmp_path / "tests" / "test_ext.py").write_text("from tests.test_base import TestBlocks\n")
    code, xml = run_pytest(tmp_path, "-o", "junit_family=xunit1", "tests")
    r = parse_junit(xml)
    named = sorted((c.nodeid() or nodeid_in_tree(c.classname, c.name, tmp_path)) for c in r.cases)
    assert named == ["tests/test_base.py::TestBlocks::test_x", "tests/test_ext.py::TestBlocks::test_x"]
    assert [c.nodeid() for c in r.cases if c.classname.startswith("tests.test_ext")] == [None]
