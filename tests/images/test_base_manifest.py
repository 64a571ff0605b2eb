"""A Debian base says what it is made of: every installed package's name, version and architecture in
/etc/sbx-base-packages.txt and that file's digest as a label; a build whose packages differ from the list
recorded in images/base/ says which ones changed. mmdebstrap and debootstrap make the same package set."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from orchestrator.images import base
from orchestrator.images.base import MANIFEST_IN_IMAGE, MANIFEST_LABEL, installed_packages, package_drift

STATUS = """Package: python3
Status: install ok installed
Architecture: amd64
Version: 3.11.2-1+b1
Description: interactive high-level object-oriented language
 a continuation line: Version: 9.9 must not count

Package: old-tool
Status: deinstall ok config-files
Architecture: amd64
Version: 1.0

Package: adduser
Status: install ok installed
Architecture: all
Version: 3.134
"""


def test_the_manifest_lists_installed_packages_only(tmp_path: Path) -> None:
    (tmp_path / "var/lib/dpkg").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/status").write_text(STATUS)
    assert installed_packages(tmp_path) == "adduser 3.134 all\npython3 3.11.2-1+b1 amd64\n"


def test_drift_names_changed_added_and_removed_packages() -> None:
    recorded = "adduser 3.134 all\nbase-files 12.4+deb12u15 amd64\npython3 3.11.2-1+b1 amd64\n"
    built = "adduser 3.134 all\nbase-files 12.4+deb12u16 amd64\nzlib1g 1:1.2.13 amd64\n"
    assert package_drift(recorded, built) == {
        "base-files": ("12.4+deb12u15 amd64", "12.4+deb12u16 amd64"),
        "python3": ("3.11.2-1+b1 amd64", None),
        "zlib1g": (None, "1:1.2.13 amd64"),
    }
    assert package_drift(recorded, recorded) == {}


def test_the_shipped_records_are_manifests() -> None:
    from orchestrator import paths

    recorded = sorted((paths.images_root() / "base").glob("*.packages"))
    assert [p.stem for p in recorded] == ["bookworm", "trixie"]  # the standard base and the task environments'
    for path in recorded:
        lines = path.read_text().splitlines()
        assert len(lines) > 50 and lines == sorted(lines) and all(len(line.split()) == 3 for line in lines)
        assert any(line.startswith("python3 ") for line in lines)


@pytest.mark.docker
def test_the_built_base_carries_its_manifest_and_digest(docker_client, sandbox_image: str, tmp_path: Path) -> None:
    import docker.errors

    from orchestrator.images.base import find_suite_base

    tag = find_suite_base(docker_client) or "sbx-base:none"
    try:
        image = docker_client.images.get(tag)
    except docker.errors.ImageNotFound:  # a public base was pulled instead: nothing was bootstrapped here
        pytest.skip(f"{tag} is not on this engine (the base came from a registry)")
    listing = docker_client.containers.run(tag, ["cat", MANIFEST_IN_IMAGE], remove=True, network_disabled=True)
    status = docker_client.containers.run(tag, ["cat", "/var/lib/dpkg/status"], remove=True, network_disabled=True)
    assert image.labels[MANIFEST_LABEL] == "sha256:" + hashlib.sha256(listing).hexdigest()
    (tmp_path / "var/lib/dpkg").mkdir(parents=True)
    (tmp_path / "var/lib/dpkg/status").write_bytes(status)
    assert installed_packages(tmp_path) == listing.decode()
    # whichever bootstrapper made it, the same packages as recorded (versions move with Debian's point releases:
    # the build logs those; a different set of names is another recipe, e.g. mmdebstrap without its
    # merged-usr hook installs usrmerge and three perl libraries instead of usr-is-merged)
    recorded = (Path(base.__file__).parents[2] / "images/base/bookworm.packages").read_text()
    assert {line.split()[0] for line in listing.decode().splitlines()} == {
        line.split()[0] for line in recorded.splitlines()}


def test_a_debootstrap_base_keeps_its_tag_and_another_bootstrapper_has_its_own() -> None:
    # the tags debootstrap bases had before mmdebstrap was preferred: an engine holding one keeps using it
    assert base.debian_base_tag("bookworm", "debootstrap") == "sbx-base:6f78fc9f30d9"
    assert base.debian_base_tag("trixie", "debootstrap") == "sbx-base:eeeba70f65fd"
    assert base.debian_base_tag("bookworm", "mmdebstrap") not in {"sbx-base:6f78fc9f30d9",
                                                                  base.debian_base_tag("trixie", "mmdebstrap")}


def test_mmdebstrap_makes_a_merged_usr_as_debootstrap_does(tmp_path: Path) -> None:
    cmd = base._bootstrap_command("mmdebstrap", "bookworm", tmp_path)
    assert f"--hook-dir={base._MERGED_USR_HOOK}" in cmd and "--variant=minbase" in cmd
    assert cmd[-3:] == ["bookworm", str(tmp_path), base.MIRROR]
    if base.bootstrapper() == "mmdebstrap":  # the hook ships with mmdebstrap
        assert (base._MERGED_USR_HOOK / "setup00.sh").is_file()
    assert base._bootstrap_command("debootstrap", "trixie", tmp_path)[:2] == ["debootstrap", "--variant=minbase"]
