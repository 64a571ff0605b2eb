"""Package names loaded on first use (PEP 562), so importing a package for one light module does not import
its heavy siblings (issue 23: a command that reads the ledger must not load the Docker SDK)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: the name `n` is imported from module `where[n]` when first
    looked up, then kept in the package's namespace (later lookups skip the hook)."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
