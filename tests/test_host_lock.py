"""requirements-host.lock is the host venv's whole closure: every requirement pyproject.toml names (with the
test and fleet extras scripts/setup installs) is in it at a version the requirement admits, with a hash."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _locked() -> dict[str, str]:
    rows = [r for r in (ROOT / "requirements-host.lock").read_text().splitlines() if r and not r.startswith("#")]
    pins = {}
    for row in rows:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+) --hash=sha256:[0-9a-f]{64}", row)
        assert m, f"not `name==version --hash=sha256:...`: {row!r}"
        pins[canonicalize_name(m[1])] = m[2]
    return pins


def test_every_requirement_of_sbx_is_locked_at_a_version_it_admits() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [*project["project"]["dependencies"], *project["project"]["optional-dependencies"]["test"],
              *project["project"]["optional-dependencies"]["fleet"], *project["build-system"]["requires"]]
    pins = _locked()
    for text in wanted:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in requirements-host.lock: run scripts/lock-host"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req.name}=={pins[name]} is not {req}"
