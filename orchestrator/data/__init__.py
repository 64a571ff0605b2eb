"""Deterministic data preparation for the flight-delay task, and the API to read what it wrote.

Layout of a prepared directory (default `HOME/data/flights`, orchestrator/home.py):

    train.csv, eval.csv                      features + dep_delayed_15min; given to the agent
    holdout.features.csv, later.features.csv features only; given to the scorer container
    holdout.labels.csv, later.labels.csv     dep_delayed_15min only, same row order; host only
    manifest.json                            source, inputs, options; rows, balance, columns, sha256 per file
"""


from orchestrator.data.columns import FEATURES, LABEL, NEGATIVE, POSITIVE, DepTime
from orchestrator.data.manifest import (
    AGENT_FILES,
    DATA_FILES,
    DATASETS,
    MANIFEST,
    DatasetPaths,
    FileEntry,
    InputFile,
    Manifest,
    PrepareOptions,
    dataset_paths,
    load_manifest,
    verify,
)
from orchestrator.data.pipeline import DEFAULT_SEED, PrepareResult, draw_slices, make_options, prepare
from orchestrator.data.slicing import SLICES, SliceSizes
from orchestrator.data.source import SOURCES, Source, open_source

__all__ = [
    "AGENT_FILES",
    "DATASETS",
    "DATA_FILES",
    "DEFAULT_SEED",
    "FEATURES",
    "LABEL",
    "MANIFEST",
    "NEGATIVE",
    "POSITIVE",
    "SLICES",
    "SOURCES",
    "DatasetPaths",
    "DepTime",
    "FileEntry",
    "InputFile",
    "Manifest",
    "PrepareOptions",
    "PrepareResult",
    "SliceSizes",
    "Source",
    "dataset_paths",
    "draw_slices",
    "load_manifest",
    "make_options",
    "open_source",
    "prepare",
    "verify",
]

