"""Constant folding of strings and file paths, and the task's file layout.

Agents name the evaluation file in many ways: a literal, `os.path.join(DATA, "eval.csv")`,
`Path(__file__).parent / "data" / f"{split}.csv"`, `TRAIN.replace("train", "eval")`, a glob over `data/`,
a loop over `os.listdir("data")`. Folding these to constant strings is what lets the engine say which file a
`read_csv` opens, and so keep the training file clean while the evaluation file is tainted.

Paths and strings are both plain `str` constants here: `Path("data") / "eval.csv"` folds to
"data/eval.csv". A result that cannot be folded is `UNKNOWN`.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.compliance.values import UNKNOWN

#: `__file__` of the audited script: the data folder sits next to it
SCRIPT_PATH = "train.py"


@dataclass(frozen=True)
class TaskLayout:
    """What the audited script can see on disk, and how the scorer calls it."""

    #: base names of the evaluation file (a path whose base name is one of these is the evaluation file)
    eval_names: tuple[str, ...] = ("eval.csv",)
    #: files a glob or listing of the data folder finds, relative to the script's folder
    data_files: tuple[str, ...] = ("data/eval.csv", "data/train.csv")
    #: the module-level function the scorer calls with a batch
    entry: str = "predict_proba"
    #: the columns of the frame the scorer passes to it (features only: the label is never there)
    batch_columns: tuple[str, ...] = (
        "Month", "DayofMonth", "DayOfWeek", "DepTime", "UniqueCarrier", "Origin", "Dest", "Distance",
    )  # fmt: skip
    #: the label column of the data files (None when not known: then any column may be the label)
    target: str | None = "dep_delayed_15min"
    #: JSON files next to the script and their text: agents read the task's settings from them
    #: (`TARGET = json.load(open("task.json"))["target"]`), so the label column's name folds to a constant
    json_files: tuple[tuple[str, str], ...] = (
        ("task.json", '{"target": "dep_delayed_15min", "positive_label": "Y", "id_columns": []}'),
    )

    @property
    def data_columns(self) -> tuple[str, ...]:
        """The columns of the training and evaluation files: the features, then the label."""
        return self.batch_columns + ((self.target,) if self.target is not None else ())

    def is_data_path(self, text: str) -> bool:
        """Whether a path names one of the data files (training or evaluation) of the layout."""
        name = posixpath.basename(text.replace("\\", "/"))
        return self.is_eval_path(text) or name in {posixpath.basename(f) for f in self.data_files}

    def json_content(self, path: str) -> Any:
        """The parsed content of a JSON file of the layout, or UNKNOWN."""
        name = _norm(path)
        for known, text in self.json_files:
            if name == known or name.endswith("/" + known):
                return json.loads(text)
        return UNKNOWN

    def is_eval_path(self, text: str) -> bool:
        if "/" not in text and "." not in text:
            return False  # a bare word such as "eval" is a key or a split name, not a file
        path = text.split("?", 1)[0].split("#", 1)[0].strip()
        return posixpath.basename(path.replace("\\", "/")) in self.eval_names

    def glob(self, pattern: str) -> list[str]:
        """Files of the layout a glob pattern matches, spelled with the pattern's own folder prefix."""
        pattern = _norm(pattern)
        folder, name_pattern = posixpath.split(pattern)
        hits = []
        for entry in self.data_files:
            entry_folder, entry_name = posixpath.split(entry)
            if "**" in pattern:
                folder_ok = True
            else:
                # "data", "./data", "/home/agent/task/data" all name the layout's data folder
                folder_ok = (
                    folder == entry_folder
                    or folder.endswith("/" + entry_folder)
                    or ("*" in folder and fnmatch.fnmatchcase(entry_folder, folder))
                )
            if folder_ok and fnmatch.fnmatchcase(entry_name, name_pattern):
                hits.append(posixpath.join(folder, entry_name) if folder else entry_name)
        return sorted(hits)

    def listdir(self, folder: str) -> list[str] | None:
        """Base names in `folder`, or None when the folder is not one of the layout's."""
        folder = _norm(folder)
        names = [
            posixpath.basename(e)
            for e in self.data_files
            if (d := posixpath.dirname(e)) and (folder == d or folder.endswith("/" + d))
        ]
        return sorted(names) if names else None


def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    if not path:
        return ""
    normed = posixpath.normpath(path)
    return "" if normed == "." else normed


def path_join(parts: Sequence[str]) -> str:
    out = ""
    for part in parts:
        out = posixpath.join(out, part) if out else part
    return _norm(out) if out else ""


# --- folding -------------------------------------------------------------------------------------------


def _all_str(values: Sequence[Any]) -> bool:
    return all(isinstance(v, str) for v in values)


def fold_function(qualname: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """The constant a call to a library function returns, when its arguments are known constants."""
    name = qualname.rsplit(".", 1)[-1]
    module = qualname.rsplit(".", 1)[0] if "." in qualname else ""
    if qualname in {"os.path.join", "posixpath.join", "ntpath.join"} and args and _all_str(args):
        return path_join(args)
    if module in {"pathlib", "os.path", "posixpath"} or qualname.startswith("pathlib."):
        if name in {"Path", "PurePath", "PosixPath", "PurePosixPath", "WindowsPath"}:
            if not args:
                return ""
            return path_join(args) if _all_str(args) else UNKNOWN
        if args and isinstance(args[0], str):
            return _fold_path_function(name, args[0])
    if qualname in {"os.getenv", "os.environ.get"}:
        default = kwargs.get("default", args[1] if len(args) > 1 else None)
        return default if isinstance(default, str) else UNKNOWN
    if qualname == "os.fspath" and args and isinstance(args[0], str):
        return args[0]
    if qualname == "builtins.str" and len(args) == 1 and args[0] is not UNKNOWN:
        return args[0] if isinstance(args[0], str) else str(args[0])
    if qualname in {"builtins.int", "builtins.float", "builtins.bool"} and len(args) == 1:
        try:
            return {"int": int, "float": float, "bool": bool}[name](args[0])
        except (TypeError, ValueError, OverflowError):
            return UNKNOWN
    return UNKNOWN


def _fold_path_function(name: str, path: str) -> Any:
    if name in {"abspath", "realpath", "normpath", "expanduser", "expandvars"}:
        return _norm(path)
    if name == "basename":
        return posixpath.basename(path)
    if name == "dirname":
        return posixpath.dirname(path)
    if name == "splitext":
        return posixpath.splitext(path)
    return UNKNOWN


_STR_METHODS_NO_ARGS: dict[str, Callable[[str], str]] = {
    "lower": str.lower, "upper": str.upper, "strip": str.strip, "lstrip": str.lstrip, "rstrip": str.rstrip,
    "title": str.title, "capitalize": str.capitalize, "casefold": str.casefold,
}  # fmt: skip


def fold_method(receiver: str, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """The constant `receiver.name(*args)` returns, for str and pathlib methods on a known string."""
    try:
        if name in _STR_METHODS_NO_ARGS and not args:
            return _STR_METHODS_NO_ARGS[name](receiver)
        if name in {"strip", "lstrip", "rstrip"} and _all_str(args):
            return getattr(receiver, name)(*args)
        if name == "replace" and len(args) >= 2 and _all_str(args[:2]):
            return receiver.replace(args[0], args[1])
        if (
            name in {"startswith", "endswith"}
            and args
            and (isinstance(args[0], str) or (isinstance(args[0], tuple) and _all_str(args[0])))
        ):
            return getattr(receiver, name)(args[0])
        if name in {"removeprefix", "removesuffix"} and args and isinstance(args[0], str):
            return getattr(receiver, name)(args[0])
        if name in {"split", "rsplit"} and all(a is not UNKNOWN for a in args):
            return tuple(getattr(receiver, name)(*args))
        if (
            name == "format"
            and all(a is not UNKNOWN for a in args)
            and all(v is not UNKNOWN for v in kwargs.values())
        ):
            return receiver.format(*args, **kwargs)
        if name == "join" and args and isinstance(args[0], tuple) and _all_str(args[0]):
            return receiver.join(args[0])
        if name in {"joinpath", "__truediv__"} and args and _all_str(args):
            return path_join([receiver, *args])
        if name == "with_suffix" and args and isinstance(args[0], str):
            return posixpath.splitext(receiver)[0] + args[0]
        if name == "with_name" and args and isinstance(args[0], str):
            return posixpath.join(posixpath.dirname(receiver), args[0])
        if name in {"as_posix", "resolve", "absolute", "expanduser", "__fspath__"} and not args:
            return _norm(receiver)
    except (TypeError, ValueError, IndexError, KeyError):
        return UNKNOWN
    return UNKNOWN


def fold_attribute(receiver: str, name: str) -> Any:
    """pathlib attributes of a known path string."""
    if name == "name":
        return posixpath.basename(receiver)
    if name == "stem":
        return posixpath.splitext(posixpath.basename(receiver))[0]
    if name == "suffix":
        return posixpath.splitext(receiver)[1]
    if name == "parent":
        return posixpath.dirname(_norm(receiver))
    if name == "parts":
        return tuple(p for p in receiver.split("/") if p)
    return UNKNOWN


def fold_format(value: Any, conversion: int, spec: str) -> Any:
    """One `{value!conversion:spec}` field of an f-string."""
    if value is UNKNOWN:
        return UNKNOWN
    try:
        if conversion == ord("r"):
            value = repr(value)
        elif conversion == ord("s"):
            value = str(value)
        elif conversion == ord("a"):
            value = ascii(value)
        return format(value, spec)
    except (TypeError, ValueError):
        return UNKNOWN
