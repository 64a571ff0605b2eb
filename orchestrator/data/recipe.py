"""Run a task's data recipe (specs/datarecipe.py): read the table, split it, write the task's files.

The output is laid out as every ml task reads it (the flight task's too): train.csv and eval.csv with the
target, `<set>.features.csv` and `<set>.labels.csv` for holdout and later, and manifest.json. The manifest
records the recipe (and its digest), the input's fingerprint (a file's sha256, or a package's name and
version with the table's content digest), the rows dropped for missing values, and per file its rows,
columns and sha256. Output bytes depend only on the recipe and the input: a fixed column order, `\\n` line
endings, no timestamps. Written into a staging folder and swapped into place, as the flight data are.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from orchestrator.data.manifest import MANIFEST, features_file, file_sha256, labels_file
from orchestrator.data.pipeline import _staging, has_manifest
from orchestrator.failures import DataError
from orchestrator.log import get_logger, timed
from orchestrator.specs.datarecipe import (
    DataRecipe,
    FileTable,
    PackageTable,
    Slice,
    StratifiedSplit,
    TimeSplit,
)

log = get_logger(__name__)

FORMAT: Final = "recipe/1"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RecipeFile(_Strict):
    rows: int
    columns: tuple[str, ...]
    sha256: str


class RecipeManifest(_Strict):
    format: str
    recipe_sha256: str
    recipe: dict[str, Any]
    input: dict[str, Any]
    rows_read: int
    rows_dropped_missing: int
    #: the rows of each slice's period before `rows` drew from it
    available: dict[str, int]
    files: dict[str, RecipeFile]

    def summary(self) -> str:
        lines = [f"recipe {self.recipe_sha256[:12]}, {self.rows_read:,} rows read, "
                 f"{self.rows_dropped_missing:,} dropped for missing values"]
        lines += [f"  {name:<22} {entry.rows:>9,} rows" for name, entry in self.files.items()]
        return "\n".join(lines)


@dataclass(frozen=True)
class RecipeResult:
    out: Path
    manifest: RecipeManifest
    skipped: bool
    replaced: bool = False


def recipe_digest(recipe: DataRecipe) -> str:
    return hashlib.sha256(json.dumps(recipe.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


def _read(recipe: DataRecipe, root: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The source table and its fingerprint."""
    src = recipe.source
    if isinstance(src, FileTable):
        path = root / src.path
        if not path.is_file():
            raise DataError(f"{path}: the recipe's source file does not exist")
        digest = file_sha256(path)
        if digest != src.sha256:
            raise DataError(f"{path}: sha256 {digest} is not the recipe's {src.sha256} (the file changed)")
        table = pd.read_parquet(path) if path.suffix.lower() == ".parquet" else pd.read_csv(path)
        return table, {"file": src.path, "bytes": path.stat().st_size, "sha256": digest}
    assert isinstance(src, PackageTable)
    try:
        module = importlib.import_module(src.module)
        table = getattr(module, src.attribute)
    except (ImportError, AttributeError) as exc:
        raise DataError(f"source {src.module}.{src.attribute}: {exc}") from None
    if not isinstance(table, pd.DataFrame):
        raise DataError(f"source {src.module}.{src.attribute} is a {type(table).__name__}, not a table")
    top = src.module.split(".")[0]
    try:
        version = importlib.metadata.version(top)
    except importlib.metadata.PackageNotFoundError:
        version = None
    content = hashlib.sha256(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes()).hexdigest()
    return table, {"package": top, "version": version, "table": f"{src.module}.{src.attribute}",
                   "content_sha256": content}


def _columns(recipe: DataRecipe, table: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The output columns (renamed), the split's time column kept aside as `__time`; rows with a missing
    value dropped when the recipe says so. Whole-number float columns are written as integers."""
    used = dict(recipe.columns)
    if isinstance(recipe.split, TimeSplit):
        used["__time"] = recipe.split.column
    missing = sorted({c for c in used.values() if c not in table.columns})
    if missing:
        raise DataError(f"the source has no column {', '.join(map(repr, missing))}; it has "
                        f"{', '.join(map(str, table.columns[:30]))}")
    frame = pd.DataFrame({out: table[src].to_numpy() for out, src in used.items()})
    before = len(frame)
    if recipe.dropna:
        frame = frame.dropna().reset_index(drop=True)
    dropped = before - len(frame)
    for c in recipe.columns:
        col = frame[c]
        if col.dtype.kind == "f" and len(col) and np.all(np.isfinite(col)) and np.all(col == np.round(col)):
            frame[c] = col.astype(np.int64)
    return frame, dropped


def _time_slices(recipe: DataRecipe, frame: pd.DataFrame) -> dict[Slice, pd.DataFrame]:
    split = recipe.split
    assert isinstance(split, TimeSplit)
    try:
        when = pd.to_datetime(frame["__time"])
    except (ValueError, TypeError) as exc:
        raise DataError(f"split.column {split.column!r}: not a date or time: {exc}") from None
    zone = split.timezone
    when = when.dt.tz_convert(zone) if when.dt.tz is not None else when.dt.tz_localize(zone)
    edges = [pd.Timestamp(d).tz_localize(zone) for d in split.cuts]
    end = pd.Timestamp(split.until).tz_localize(zone) if split.until else None
    masks: dict[Slice, Any] = {
        "train": when < edges[0],
        "eval": (when >= edges[0]) & (when < edges[1]),
        "holdout": (when >= edges[1]) & (when < edges[2]),
        "later": (when >= edges[2]) & ((when < end) if end is not None else True),
    }
    return {name: frame[np.asarray(m, dtype=bool)] for name, m in masks.items()}


def _stratified_slices(recipe: DataRecipe, frame: pd.DataFrame) -> dict[Slice, pd.DataFrame]:
    split = recipe.split
    assert isinstance(split, StratifiedSplit)
    rng = np.random.default_rng([recipe.seed, 1])
    groups = [frame.index.to_numpy()] if not split.stratify else [
        frame.index[frame[recipe.target].astype(str) == v].to_numpy()
        for v in sorted(frame[recipe.target].astype(str).unique())
    ]
    if split.stratify and len(groups) > 50:
        raise DataError(f"split.stratify: target {recipe.target!r} has {len(groups)} values; a stratified split "
                        "is for class labels (set stratify: false for a numeric target)")
    parts: dict[Slice, list[np.ndarray]] = {"train": [], "eval": [], "holdout": []}
    for idx in groups:
        idx = idx[rng.permutation(idx.size)]
        a = round(idx.size * split.fractions["train"])
        b = a + round(idx.size * split.fractions["eval"])
        parts["train"].append(idx[:a])
        parts["eval"].append(idx[a:b])
        parts["holdout"].append(idx[b:])
    return {name: frame.loc[np.sort(np.concatenate(p))] for name, p in parts.items()}


def draw(recipe: DataRecipe, frame: pd.DataFrame) -> tuple[dict[Slice, pd.DataFrame], dict[str, int]]:
    """Each slice's rows (seeded draws of `rows`, in a seeded order) and how many each period had."""
    pools = _time_slices(recipe, frame) if isinstance(recipe.split, TimeSplit) else _stratified_slices(recipe, frame)
    out: dict[Slice, pd.DataFrame] = {}
    available: dict[str, int] = {}
    for i, name in enumerate(recipe.slices):
        pool = pools[name]
        available[name] = len(pool)
        want = recipe.rows.get(name, len(pool))
        if want > len(pool):
            raise DataError(f"rows.{name}: {want} rows wanted, the {name} period has {len(pool)}")
        if len(pool) == 0:
            raise DataError(f"the {name} period has no rows; check split")
        rng = np.random.default_rng([recipe.seed, 2, i])
        picked = pool.iloc[np.sort(rng.choice(len(pool), size=want, replace=False))]
        out[name] = picked.iloc[rng.permutation(want)].reset_index(drop=True)
    return out, available


def _write(path: Path, frame: pd.DataFrame, columns: list[str]) -> RecipeFile:
    frame[columns].to_csv(path, index=False, lineterminator="\n", encoding="utf-8")
    return RecipeFile(rows=len(frame), columns=tuple(columns), sha256=file_sha256(path))


def _existing(out: Path) -> RecipeManifest | None:
    if not has_manifest(out):
        return None
    try:
        return RecipeManifest.model_validate_json((out / MANIFEST).read_text(encoding="utf-8"))
    except ValidationError:
        return None  # another recipe's or the flight pipeline's manifest: rebuilt


def prepare_recipe(recipe: DataRecipe, root: Path, out: Path, *, force: bool = False) -> RecipeResult:
    """Write the recipe's files into `out` (nothing when `out` holds the same recipe on the same input)."""
    with timed(log, "data.recipe", out=str(out)) as extra:
        table, source = _read(recipe, root)
        digest = recipe_digest(recipe)
        existing = _existing(out)
        if existing is not None and not force and (existing.format, existing.recipe_sha256, existing.input) == (
                FORMAT, digest, source):
            extra["skipped"] = True
            return RecipeResult(out, existing, skipped=True)
        frame, dropped = _columns(recipe, table)
        slices, available = draw(recipe, frame)
        replaced = (out / MANIFEST).is_file()
        with _staging(out) as tmp:
            files: dict[str, RecipeFile] = {}
            for name, part in slices.items():
                if name in ("train", "eval"):
                    files[f"{name}.csv"] = _write(tmp / f"{name}.csv", part, list(recipe.columns))
                else:
                    files[features_file(name)] = _write(tmp / features_file(name), part, recipe.features)
                    files[labels_file(name)] = _write(tmp / labels_file(name), part, [recipe.target])
            manifest = RecipeManifest(format=FORMAT, recipe_sha256=digest, recipe=recipe.model_dump(mode="json"),
                                      input=source, rows_read=len(table), rows_dropped_missing=dropped,
                                      available=available, files=files)
            (tmp / MANIFEST).write_text(json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n",
                                        encoding="utf-8", newline="\n")
        extra.update(skipped=False, replaced=replaced)
        return RecipeResult(out, manifest, skipped=False, replaced=replaced)
