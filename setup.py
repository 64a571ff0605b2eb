"""The build hook: a wheel of sbx carries the checkout's shipped folders (tasks/, budgets/, images/, studies/)
inside the package, under orchestrator/_bundled/, so an installed sbx finds its tasks, budgets, studies and
image recipes with no checkout beside it (orchestrator/paths.py reads the checkout's folders first, then
these). The folders stay at the top of the repository, where they are edited; only the wheel holds a copy.

Everything else about the package is in pyproject.toml. The license is here only because setuptools 65.5.0
(the version scripts/setup builds with, see scripts/lock-host) accepts it in pyproject.toml as a table
alone, a form setuptools 77 and later deprecate (with a banner per build step); given here it is metadata
for both.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: the same names as orchestrator/paths.py: SHIPPED_FOLDERS (not imported: a build imports nothing of sbx)
SHIPPED_FOLDERS = ("tasks", "budgets", "images", "studies")


def not_ours(folder: str, names: list[str]) -> list[str]:
    """What a checkout may hold in those folders that is not sbx's own (.gitignore; MANIFEST.in says the same):
    the downloaded wheels of images/wheelhouse and images/fleet/wheelhouse (80 MB in a checkout that built
    its images; the empty folder stays, the Dockerfiles copy it), the bootstrapped root, bytecode."""
    if Path(folder).name == "wheelhouse":
        return [n for n in names if n != ".keep"]
    return [n for n in names if n in ("__pycache__", ".rootfs") or n.endswith((".pyc", ".pyo"))]


class BuildPyWithShippedFolders(build_py):
    """build_py, then a fresh copy of each shipped folder into the build's orchestrator/_bundled/."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # an editable install runs from the checkout and reads its folders where they are
        bundled = Path(self.build_lib) / "orchestrator" / "_bundled"
        shutil.rmtree(bundled, ignore_errors=True)  # a folder removed since the last build must not linger
        for name in SHIPPED_FOLDERS:
            shutil.copytree(ROOT / name, bundled / name, ignore=not_ours)


setup(cmdclass={"build_py": BuildPyWithShippedFolders}, license="Apache-2.0")
