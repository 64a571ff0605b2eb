"""sbx grader harness: pytest with plugin autoload off and only the plugins the image itself installed,
named by their entry points (orchestrator/tasks/pytest_harness.py writes this file into the grader's
harness folder and runs it as `python -I run_pytest.py ...` in the task's image)."""
import importlib.metadata
import sys
import sysconfig

_site = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
_names = sorted({ep.name for dist in importlib.metadata.distributions(path=_site)
                 for ep in dist.entry_points if ep.group == "pytest11"})
_args = [arg for name in _names for arg in ("-p", name)] + sys.argv[1:]
sys.argv = ["pytest", *_args]
import pytest  # noqa: E402  (the task's own pytest, imported once the plugin options are in argv)

raise SystemExit(pytest.console_main())
