"""A strict, bounded JUnit XML parser for the test reports graders produce.

The report comes out of a container that ran agent code, so it is hostile input. It is read with expat
directly (no tree, no DTD machinery): a DOCTYPE, an entity declaration or reference to an external entity,
a processing instruction, an encoding other than UTF-8, an unknown element, too many elements, too deep a
nesting, an oversized attribute or the whole document over its byte cap all refuse the report with a
reason. Nothing is resolved, fetched or expanded. (defusedxml would refuse the same DTD constructs; it is
not needed because this parser never builds a tree and sets its own handlers for every DTD event.)

Test ids: pytest writes each test as `classname` + `name`, derived from its node id by `mangle()` below
(the same rule as pytest's junitxml `mangle_test_address`), so an expected node id is looked up by the
pair it becomes, never by parsing a classname back into a path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal
from xml.parsers import expat

Outcome = Literal["passed", "failed", "error", "skipped"]
#: worst first: one testcase element may carry several results (a failure and a teardown error)
_RANK: dict[str, int] = {"error": 3, "failed": 2, "skipped": 1, "passed": 0}
_ELEMENTS = {"testsuites", "testsuite", "testcase", "failure", "error", "skipped", "system-out", "system-err",
             "properties", "property"}
_RESULT = {"failure": "failed", "error": "error", "skipped": "skipped"}
_MESSAGE_KEEP = 500


@dataclass(frozen=True)
class JunitCaps:
    max_bytes: int = 16 << 20
    max_elements: int = 500_000
    max_depth: int = 6
    max_attribute_bytes: int = 1 << 20
    max_testcases: int = 200_000


class ReportError(ValueError):
    """The report was refused; `reason` is one short word for the verdict."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    outcome: Outcome
    message: str = ""
    seconds: float | None = None
    file: str | None = None     # pytest writes it with junit_family=xunit1 (the builder asks for it)

    def nodeid(self) -> str | None:
        """The pytest node id, rebuilt from `file` (None without it, or when the pieces do not fit)."""
        if not self.file or not self.file.endswith(".py"):
            return None
        module = self.file[:-3].replace("/", ".")
        if self.classname == module:
            classes: list[str] = []
        elif self.classname.startswith(module + "."):
            classes = self.classname[len(module) + 1:].split(".")
        else:
            return None
        nodeid = "::".join([self.file, *classes, self.name])
        return nodeid if mangle(nodeid) == (self.classname, self.name) else None


@dataclass
class Report:
    cases: list[Case] = field(default_factory=list)
    #: (classname, name) -> worst outcome over every testcase element with that key
    by_key: dict[tuple[str, str], Outcome] = field(default_factory=dict)
    collection_errors: list[str] = field(default_factory=list)
    duplicates: int = 0

    def outcome_of(self, nodeid: str) -> Outcome | None:
        return self.by_key.get(mangle(nodeid))

    @property
    def counts(self) -> dict[str, int]:
        out = {k: 0 for k in _RANK}
        for outcome in self.by_key.values():
            out[outcome] += 1
        return out


def mangle(nodeid: str) -> tuple[str, str]:
    """The (classname, name) pytest's junitxml writes for a node id (pytest's mangle_test_address)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


class _Parser:
    def __init__(self, caps: JunitCaps) -> None:
        self.caps = caps
        self.report = Report()
        self.stack: list[str] = []
        self.elements = 0
        self.case: dict[str, object] | None = None
        self.saw_root = False

    def refuse(self, reason: str, detail: str) -> None:
        raise ReportError(reason, detail)

    # --- DTD and other constructs a test report never needs: refused outright -------------------------
    def doctype(self, *_: object) -> None:
        self.refuse("forbidden", "a DOCTYPE declaration")

    def entity_decl(self, *_: object) -> None:
        self.refuse("forbidden", "an entity declaration")

    def external_entity(self, *_: object) -> int:
        self.refuse("forbidden", "a reference to an external entity")
        return 0

    def pi(self, target: str, _data: str) -> None:
        self.refuse("forbidden", f"a processing instruction <?{target[:40]}")

    def xml_decl(self, _version: str | None, encoding: str | None, _standalone: int) -> None:
        if encoding is not None and encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
            self.refuse("malformed", f"encoding {encoding[:40]!r}; only UTF-8 is accepted")

    # --- the elements ----------------------------------------------------------------------------------
    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.elements += 1
        if self.elements > self.caps.max_elements:
            self.refuse("too_large", f"more than {self.caps.max_elements} elements")
        if len(self.stack) >= self.caps.max_depth:
            self.refuse("malformed", f"nesting deeper than {self.caps.max_depth}")
        if tag not in _ELEMENTS:
            self.refuse("malformed", f"unknown element <{tag[:60]}>")
        for key, value in attrs.items():
            if len(value) > self.caps.max_attribute_bytes:
                self.refuse("too_large", f"attribute {key[:40]} of <{tag}> is {len(value)} characters")
        parent = self.stack[-1] if self.stack else None
        allowed_parent = {"testsuites": (None,), "testsuite": (None, "testsuites"), "testcase": ("testsuite",),
                          "properties": ("testsuite", "testcase"), "property": ("properties",),
                          "system-out": ("testsuite", "testcase"), "system-err": ("testsuite", "testcase")}
        expected = allowed_parent.get(tag, ("testcase",))
        if parent not in expected:
            self.refuse("malformed", f"<{tag}> inside <{parent or 'the document'}>")
        if parent is None:
            if self.saw_root:
                self.refuse("malformed", "a second root element")
            self.saw_root = True
        if tag == "testcase":
            if "name" not in attrs or "classname" not in attrs:
                self.refuse("malformed", "a <testcase> without name or classname")
            seconds: float | None
            try:
                seconds = float(attrs["time"]) if "time" in attrs else None
            except ValueError:
                self.refuse("malformed", f"testcase time {attrs['time'][:40]!r}")
            self.case = {"classname": attrs["classname"], "name": attrs["name"], "outcome": "passed",
                         "message": "", "seconds": seconds, "file": attrs.get("file")}
        elif tag in _RESULT and self.case is not None:
            outcome = _RESULT[tag]
            if _RANK[outcome] > _RANK[str(self.case["outcome"])]:
                self.case["outcome"] = outcome
                self.case["message"] = attrs.get("message", "")[:_MESSAGE_KEEP]
        self.stack.append(tag)

    def end(self, tag: str) -> None:
        self.stack.pop()
        if tag == "testcase" and self.case is not None:
            self._add(Case(**self.case))  # type: ignore[arg-type]  # self.case holds Case's fields
            self.case = None

    def _add(self, case: Case) -> None:
        r = self.report
        if len(r.cases) >= self.caps.max_testcases:
            self.refuse("too_large", f"more than {self.caps.max_testcases} testcases")
        r.cases.append(case)
        key = (case.classname, case.name)
        if case.classname == "" and case.outcome == "error":
            r.collection_errors.append(case.name)
        if key in r.by_key:
            r.duplicates += 1
            if _RANK[case.outcome] <= _RANK[r.by_key[key]]:
                return
        r.by_key[key] = case.outcome


def parse_junit(data: bytes, caps: JunitCaps | None = None) -> Report:
    """Parse a JUnit XML report strictly; any refusal raises ReportError with a short reason."""
    caps = caps or JunitCaps()
    if len(data) > caps.max_bytes:
        raise ReportError("too_large", f"{len(data)} bytes > {caps.max_bytes}")
    if not data.strip():
        raise ReportError("malformed", "an empty report")
    state = _Parser(caps)
    p = expat.ParserCreate("UTF-8")  # no namespaces; bytes read as UTF-8 whatever a BOM says; other declarations refused
    p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    p.StartDoctypeDeclHandler = state.doctype
    p.EntityDeclHandler = state.entity_decl
    p.UnparsedEntityDeclHandler = state.entity_decl
    p.ExternalEntityRefHandler = state.external_entity
    p.ProcessingInstructionHandler = state.pi
    p.XmlDeclHandler = state.xml_decl
    p.StartElementHandler = state.start
    p.EndElementHandler = state.end
    try:
        p.Parse(data, True)
    except expat.ExpatError as exc:
        raise ReportError("malformed", f"not well-formed XML: {exc}") from None
    if not state.saw_root:
        raise ReportError("malformed", "no root element")
    return state.report
