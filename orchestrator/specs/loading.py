"""Load a YAML file into a pydantic model, reporting every problem as `file:line: key.path: message`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from orchestrator.failures import ConfigError

M = TypeVar("M", bound=BaseModel)


def _key_lines(node: yaml.Node, prefix: tuple = ()) -> dict[tuple, int]:
    """Map each key path to the 1-based line where it appears, from the composed YAML node tree."""
    lines: dict[tuple, int] = {prefix: node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = (*prefix, key.value)
            lines[path] = key.start_mark.line + 1
            lines.update({k: v for k, v in _key_lines(value, path).items() if k != path})
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines.update(_key_lines(item, (*prefix, i)))
    return lines


def _line_of(lines: dict[tuple, int], loc: tuple) -> int | None:
    # The error may point below the deepest key that exists in the file (a missing field); walk up.
    for end in range(len(loc), -1, -1):
        key = tuple(str(p) if not isinstance(p, int) else p for p in loc[:end])
        if key in lines:
            return lines[key]
    return None


def load_yaml_model(path: Path, model: type[M], update: Callable[[dict[str, Any]], None] | None = None) -> M:
    """Parse `path` and validate it as `model`; any problem raises ConfigError naming the file and line.
    `update` may add to the parsed mapping first (keys it adds have no line in the file)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys at the top level, got {type(data).__name__}")
    lines = _key_lines(node) if node is not None else {}
    if update is not None:
        update(data)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(map(str, err["loc"])) or "(top level)"
            line = _line_of(lines, tuple(err["loc"]))
            where = f"{path}:{line}" if line else str(path)
            problems.append(f"{where}: {key}: {err['msg']}")
        raise ConfigError("\n".join(problems)) from None
