"""`prepare`: turn a source into the task's files, atomically, reproducibly, with a manifest.

Everything is written into a temporary directory next to OUT and moved into place only after the
manifest is written, so a failure at any step (a slice the period cannot fill, a bad file, a full disk)
leaves OUT as it was and no partial directory behind. Output bytes depend only on the inputs and the
options: fixed column order, no index, `\\n` line endings, no timestamps in the manifest.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from orchestrator.data.columns import FEATURES, LABEL, POSITIVE, DepTime
from orchestrator.data.manifest import (
    DATASETS,
    MANIFEST,
    FileEntry,
    Manifest,
    PrepareOptions,
    dump_manifest,
    features_file,
    file_sha256,
    labels_file,
    load_manifest,
)
from orchestrator.data.slicing import (
    SLICE_PERIOD,
    SLICES,
    SliceName,
    SliceSizes,
    check_sizes,
    draw_balanced,
    slices_of_period,
)
from orchestrator.data.source import Source
from orchestrator.failures import DataError
from orchestrator.log import get_logger, timed

log = get_logger(__name__)

DEFAULT_SEED = 42


@dataclass(frozen=True)
class PrepareResult:
    out: Path
    manifest: Manifest
    #: OUT already held files prepared from the same inputs with the same options; nothing was written
    skipped: bool
    #: OUT held files prepared differently, which were replaced
    replaced: bool = False


def make_options(source: Source, *, dep_time: DepTime, seed: int, sizes: SliceSizes | None) -> PrepareOptions:
    sizes = sizes or source.default_sizes
    check_sizes(sizes)
    periods = {name: source.periods[SLICE_PERIOD[name]].name for name in SLICES}
    return PrepareOptions(dep_time=dep_time, seed=seed, sizes=sizes, periods=periods)


def draw_slices(source: Source, options: PrepareOptions) -> Iterator[tuple[SliceName, pd.DataFrame]]:
    """Every slice in write order, still carrying ROW_ID (for tests and audits; never written out).

    Each period is loaded once and released before the next, which bounds memory for the ASA files.
    """
    for index, period in enumerate(source.periods):
        wanted = [(name, options.sizes.of(name)) for name in slices_of_period(index)]
        pool = source.load(period, options.dep_time)
        log.info(
            "data.load", period=period.name, rows=len(pool), positives=int((pool[LABEL] == POSITIVE).sum())
        )
        yield from draw_balanced(
            pool,
            wanted,
            seed=options.seed,
            period_index=index,
            period=f"{period.name} ({period.where})",
        )
        del pool


def prepare(
    source: Source,
    out: Path,
    *,
    dep_time: DepTime = DepTime.SCHEDULED,
    seed: int = DEFAULT_SEED,
    sizes: SliceSizes | None = None,
    force: bool = False,
) -> PrepareResult:
    """Write train/eval (agent), holdout/later (features and labels apart) and manifest.json into `out`.

    Does nothing when `out` already holds a manifest with the same source, inputs and options, unless
    `force`. Refuses to replace a non-empty directory that has no manifest (it is not ours).
    """
    options = make_options(source, dep_time=dep_time, seed=seed, sizes=sizes)
    with timed(
        log, "data.prepare", source=source.name, out=str(out), dep_time=dep_time.value, seed=seed
    ) as extra:
        recipe = Manifest(source=source.name, inputs=source.inputs(), options=options, files={})
        existing = _existing(out)
        if existing is not None and existing.same_recipe(recipe) and not force:
            extra["skipped"] = True
            return PrepareResult(out, existing, skipped=True)
        replaced = (out / MANIFEST).is_file()
        with _staging(out) as tmp:
            files: dict[str, FileEntry] = {}
            for name, frame in draw_slices(source, options):
                files.update(_write_slice(tmp, name, frame))
                log.info("data.slice", slice=name, rows=len(frame))
            manifest = Manifest(
                source=recipe.source, inputs=recipe.inputs, options=recipe.options, files=files
            )
            (tmp / MANIFEST).write_text(dump_manifest(manifest), encoding="utf-8", newline="\n")
        extra.update(skipped=False, replaced=replaced)
        return PrepareResult(out, manifest, skipped=False, replaced=replaced)


def has_manifest(out: Path) -> bool:
    """Whether `out` holds prepared data (a manifest); False for nothing or an empty folder. A folder that
    is not empty and has no manifest is not sbx's: refused, never replaced."""
    if not out.exists():
        return False
    if not out.is_dir():
        raise DataError(f"{out}: exists and is not a directory")
    if not (out / MANIFEST).is_file():
        if any(out.iterdir()):
            raise DataError(
                f"{out}: not empty and has no {MANIFEST}; refusing to replace a directory sbx did not write"
            )
        return False
    return True


def _existing(out: Path) -> Manifest | None:
    """The manifest already in `out`, or None when there is nothing (or only an unreadable manifest)."""
    if not has_manifest(out):
        return None
    try:
        return load_manifest(out)
    except DataError as exc:
        log.warning("data.manifest_unreadable", out=str(out), error=str(exc))
        return None


def _write_slice(directory: Path, name: SliceName, frame: pd.DataFrame) -> dict[str, FileEntry]:
    """Agent slices keep the label in one file; scorer-only slices split features from labels."""
    if name in DATASETS:
        return {
            features_file(name): _write_csv(directory / features_file(name), frame, list(FEATURES)),
            labels_file(name): _write_csv(directory / labels_file(name), frame, [LABEL]),
        }
    return {f"{name}.csv": _write_csv(directory / f"{name}.csv", frame, [*FEATURES, LABEL])}


def _write_csv(path: Path, frame: pd.DataFrame, columns: list[str]) -> FileEntry:
    frame[columns].to_csv(path, index=False, lineterminator="\n", encoding="utf-8")
    positives = int((frame[LABEL] == POSITIVE).sum())
    return FileEntry(
        rows=len(frame),
        positives=positives,
        negatives=len(frame) - positives,
        columns=tuple(columns),
        sha256=file_sha256(path),
    )


@contextlib.contextmanager
def _staging(out: Path) -> Iterator[Path]:
    """Yield a fresh temp dir next to `out`; on success swap it into place, on any error remove it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    tmp.chmod(0o755)  # mkdtemp makes it 0700; the result should read like any directory sbx creates
    try:
        yield tmp
        _swap(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _swap(tmp: Path, out: Path) -> None:
    """Replace `out` by `tmp` with two renames; if the second fails, the old `out` is put back."""
    if not out.exists():
        tmp.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    out.rename(old)
    try:
        tmp.rename(out)
    except BaseException:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
