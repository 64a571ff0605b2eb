"""What of a delivered repo the scorer receives: its code, never its data or models (docs/scoring.md).

The scorer retrains the delivered train.py from scratch on the pristine data, so it gets the delivered *code*
and small text configuration only, by a stated allow-list:

- `*.py` files up to 256 KB each (a model or data written out as a Python literal larger than that is not
  code the scorer runs);
- small text configuration up to 64 KB each (`.json .yaml .yml .toml .cfg .ini .txt .md .sh`, and files
  without a suffix such as the task's `run_experiment`): UTF-8 text without NUL bytes;
- nothing under the top-level `data/` (the scorer adds the pristine `data/train.csv` and `data/eval.csv`),
  no data or model file of any size (`.csv .parquet .pkl .joblib .npy .ubj .onnx ...`), no binary file, no
  environment or cache folder (`.venv`, `site-packages`, `node_modules`, ...); `.git` and `__pycache__` are
  skipped without a word (repository metadata and bytecode the scorer's Python writes itself).

Everything else is withheld and reported (`Withheld`), so "retrains from scratch" holds: a model fitted in
the sandbox and committed never reaches the scorer. Links and special files are never followed or read;
every read is bounded before it starts. The audit reads the same selection: every `.py` the scorer gets.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from orchestrator.failures import UnscorableArtifact

MAX_PY_BYTES = 256 << 10
MAX_TEXT_BYTES = 64 << 10
MAX_KEPT_FILES = 2_000
MAX_KEPT_BYTES = 16 << 20
MAX_ENTRIES = 50_000            # entries looked at while walking the repo (the copy-out keeps at most 20,000)
LISTED = 50                     # withheld files listed one by one (all are counted)

TEXT_SUFFIXES = frozenset({"", ".json", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".txt", ".md", ".sh"})
DATA_SUFFIXES = frozenset({
    ".csv", ".tsv", ".psv", ".dat", ".data", ".parquet", ".pq", ".feather", ".arrow", ".orc", ".avro",
    ".pkl", ".pickle", ".joblib", ".dill", ".cloudpickle", ".npy", ".npz", ".mat", ".h5", ".hdf5", ".hdf",
    ".ubj", ".ubjson", ".bin", ".model", ".xgb", ".xgboost", ".lgb", ".lgbm", ".cbm", ".pt", ".pth", ".ckpt",
    ".onnx", ".pb", ".tflite", ".safetensors", ".sav", ".db", ".sqlite", ".sqlite3", ".duckdb", ".zip", ".gz",
    ".bz2", ".xz", ".zst", ".lz4", ".tar", ".tgz", ".7z", ".rar", ".xls", ".xlsx", ".json.gz", ".jsonl", ".ndjson",
    ".pyc", ".pyo", ".so", ".dylib", ".dll", ".exe",
})
SKIPPED_DIRS = frozenset({".git", "__pycache__"})
ENVIRONMENT_DIRS = frozenset({".venv", "venv", "env", "site-packages", "dist-packages", "node_modules",
                              ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints", ".cache"})
#: the pristine data files the scorer adds; the delivered ones are replaced without a report
PRISTINE = ("data/train.csv", "data/eval.csv")


@dataclass(frozen=True)
class Withheld:
    path: str
    bytes: int | None
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "bytes": self.bytes, "reason": self.reason}


@dataclass
class CodeSelection:
    """The delivered files the scorer gets (path -> bytes, mode) and what was withheld, with why."""

    files: dict[str, bytes] = field(default_factory=dict)
    executable: set[str] = field(default_factory=set)
    withheld: list[Withheld] = field(default_factory=list)
    withheld_count: int = 0

    @property
    def artifact_sha256(self) -> str:
        digest = hashlib.sha256()
        for rel in sorted(self.files):
            digest.update(rel.encode() + b"\0" + hashlib.sha256(self.files[rel]).digest())
        return digest.hexdigest()

    @property
    def train_sha256(self) -> str:
        return hashlib.sha256(self.files["train.py"]).hexdigest()

    def python_files(self) -> dict[str, bytes]:
        """The `.py` files, by path: what the delivered code can import, and what the audit reads."""
        return {rel: data for rel, data in sorted(self.files.items()) if rel.endswith(".py")}

    def withheld_json(self) -> list[dict[str, object]]:
        return [w.to_json() for w in self.withheld[:LISTED]]

    def _withhold(self, rel: str, size: int | None, reason: str) -> None:
        self.withheld_count += 1
        if len(self.withheld) < LISTED:
            self.withheld.append(Withheld(rel, size, reason))

    def write(self, dest: Path, data_files: Mapping[str, Path] | None = None) -> None:
        """The selection as a folder (readable by uid 1000), plus the pristine data files when given."""
        dest.mkdir(mode=0o755)
        for rel, data in sorted(self.files.items()):
            target = dest / rel
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            target.write_bytes(data)
            target.chmod(0o755 if rel in self.executable else 0o644)
        for name, path in (data_files or {}).items():
            (dest / "data").mkdir(mode=0o755, exist_ok=True)
            (dest / "data" / name).write_bytes(path.read_bytes())
            (dest / "data" / name).chmod(0o644)

    def tar(self, data_files: Mapping[str, Path]) -> bytes:
        """The selection and the pristine data files as one tar (relative names, files and folders only,
        owned by uid 1000): what the scorer's runner unpacks into /workspace."""
        buf = io.BytesIO()
        entries = dict(self.files)
        for name, path in data_files.items():
            entries[f"data/{name}"] = path.read_bytes()
        folders = sorted({str(p) for rel in entries for p in PurePosixPath(rel).parents if str(p) != "."})
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for folder in folders:
                info = tarfile.TarInfo(folder)
                info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o755, 1000, 1000
                tar.addfile(info)
            for rel in sorted(entries):
                info = tarfile.TarInfo(rel)
                info.size, info.uid, info.gid = len(entries[rel]), 1000, 1000
                info.mode = 0o755 if rel in self.executable else 0o644
                tar.addfile(info, io.BytesIO(entries[rel]))
        return buf.getvalue()


def _suffix(name: str) -> str:
    lower = name.lower()
    for double in (".json.gz", ".tar.gz"):
        if lower.endswith(double):
            return double
    return PurePosixPath(lower).suffix


def classify(rel: str, size: int) -> str | None:
    """Why a regular file of `size` bytes at `rel` is withheld, or None when the scorer may get it (as code
    for `.py`, as text configuration otherwise; the text check on the bytes comes later)."""
    parts = PurePosixPath(rel).parts
    if parts[0] == "data":
        return ("under data/ (the scorer uses the pristine data files)" if len(parts) > 1
                else "a file where the data folder goes")
    suffix = _suffix(parts[-1])
    if suffix == ".py":
        return None if size <= MAX_PY_BYTES else f"a .py file over {MAX_PY_BYTES >> 10} KB"
    if suffix in DATA_SUFFIXES:
        return "a data or model file"
    if suffix not in TEXT_SUFFIXES:
        return "not code or text configuration"
    if size > MAX_TEXT_BYTES:
        return f"text over {MAX_TEXT_BYTES >> 10} KB"
    return None


def _read_regular(path: Path, limit: int) -> tuple[bytes, int] | None:
    """A regular file's bytes and mode, never through a link, or None when it is not one (or changed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        data = f.read(limit + 1)
    return (data, st.st_mode) if len(data) <= limit else None


def _is_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def select_code(src: Path, *, train_py: Path | None = None) -> CodeSelection:
    """The scorer's view of a delivered repo folder `src` (or of a single train.py file). `train_py`, when
    given, is the train.py that counts (the committed version) in place of the working tree's.

    Raises UnscorableArtifact(`no_train_py`) only when there is no train.py to score; whatever else the repo
    holds (past a cap, a link, a folder where a file was expected) is withheld and reported, never raised."""
    sel = CodeSelection()
    kept_bytes = 0
    single = not src.is_dir()
    counted = train_py or (src if single else src / "train.py")  # read first: no cap may crowd it out
    got = _read_regular(counted, MAX_PY_BYTES)
    if got is not None:
        sel.files["train.py"], mode = got
        if mode & 0o100:
            sel.executable.add("train.py")
        kept_bytes += len(got[0])
    elif train_py is not None or single:
        raise UnscorableArtifact("no_train_py", f"{counted.name}: not a regular file of at most {MAX_PY_BYTES >> 10} KB")
    if single:
        return sel
    seen = 0
    stack: list[tuple[Path, PurePosixPath]] = [(src, PurePosixPath())]
    while stack:
        folder, rel_folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            sel._withhold(str(rel_folder) or ".", None, "a folder that cannot be read")
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                sel._withhold(str(rel_folder / entry.name), None, f"past {MAX_ENTRIES} entries (not looked at)")
                continue
            rel = rel_folder / entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                sel._withhold(str(rel), None, "cannot be read")
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name in SKIPPED_DIRS:
                    continue
                if entry.name in ENVIRONMENT_DIRS:
                    sel._withhold(f"{rel}/", None, "an environment or cache folder")
                    continue
                stack.append((Path(entry.path), rel))
                continue
            name = str(rel)
            if name == "train.py" and "train.py" in sel.files:
                continue  # the committed version counts
            if name in PRISTINE:
                continue
            if not stat.S_ISREG(st.st_mode):
                sel._withhold(name, None, "a link or special file")
                continue
            why = classify(name, st.st_size)
            if why is None and len(sel.files) >= MAX_KEPT_FILES:
                why = f"past {MAX_KEPT_FILES} code files"
            if why is None and kept_bytes + st.st_size > MAX_KEPT_BYTES:
                why = f"past {MAX_KEPT_BYTES >> 20} MB of code"
            if why is not None:
                sel._withhold(name, st.st_size, why)
                continue
            got = _read_regular(Path(entry.path), MAX_PY_BYTES if name.endswith(".py") else MAX_TEXT_BYTES)
            if got is None:
                sel._withhold(name, st.st_size, "changed while read, or not a regular file")
                continue
            data, mode = got
            if not name.endswith(".py") and not _is_text(data):
                sel._withhold(name, len(data), "binary")
                continue
            sel.files[name] = data
            kept_bytes += len(data)
            if mode & 0o100:
                sel.executable.add(name)
    if "train.py" not in sel.files:
        raise UnscorableArtifact("no_train_py", f"{src} holds no train.py the scorer can take")
    for kept in sorted(sel.files):  # a folder named like a file the scorer gets (`train.py/`, with the
        if any(str(p) in sel.files for p in PurePosixPath(kept).parents):  # committed train.py): cannot coexist
            del sel.files[kept]
            sel.executable.discard(kept)
            sel._withhold(kept, None, "under a folder named like a file the scorer gets")
    return sel
