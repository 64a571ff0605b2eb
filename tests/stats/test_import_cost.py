import subprocess
import sys

from orchestrator import stats


def test_importing_the_package_loads_no_numeric_library() -> None:
    # `sbx --help` must start fast: the package's names load on first use, not at import
    code = (
        "import sys, orchestrator.stats\n"
        "from orchestrator.stats import Exclusion\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pandas', 'docker') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_exported_name_resolves() -> None:
    for name in stats.__all__:
        assert getattr(stats, name) is not None
    assert "mcnemar_exact" in dir(stats)
