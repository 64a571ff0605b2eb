"""The base image: a public Python image where a registry answers, else Debian built here.

No registry answers on some machines (measured: `docker pull` fails in 0.05 s on DNS). Then the base is
made from Debian's own packages: debootstrap a minimal bookworm with Python and git into a folder, strip
caches and docs, and `docker import` it. Both bases are Debian bookworm with CPython 3.11.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

import docker
import docker.errors

from orchestrator import paths
from orchestrator.buildlock import one_build_at_a_time
from orchestrator.failures import ImageError
from orchestrator.log import get_logger, timed

log = get_logger(__name__)

PUBLIC_BASE = "python:3.11-slim-bookworm"
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = ("python3", "python3-venv", "ca-certificates", "git")
# Docs, caches and package lists the image never needs: about 180 MB of the 394 MB debootstrap tree.
_STRIP = ("var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info")

BaseMode = Literal["auto", "public", "debootstrap"]

#: what a debootstrap base holds, written into it and labelled with its digest: one `name version arch` line
#: per installed package. In one Debian archive a (name, version, arch) names one .deb, whose bytes debootstrap
#: checks against the signed Release file, so this list says exactly what the base is made of.
MANIFEST_IN_IMAGE = "/etc/sbx-base-packages.txt"
MANIFEST_LABEL = "sbx.base.packages"
#: images/base/<suite>.packages: the list a base was made of when last recorded; a build that gets other
#: versions (Debian published a point release, and snapshot.debian.org, which would serve the old ones, does
#: not answer from here) says which changed


def debootstrap_tag(suite: str = SUITE) -> str:
    """The base's tag for a Debian suite (bookworm: CPython 3.11; trixie: 3.13, used by task environments)."""
    recipe = "|".join([suite, "minbase", *PACKAGES, *_STRIP, MANIFEST_IN_IMAGE]).encode()
    return f"sbx-base:{hashlib.sha256(recipe).hexdigest()[:12]}"


def _exists(client: docker.DockerClient, ref: str) -> bool:
    try:
        client.images.get(ref)
        return True
    except docker.errors.ImageNotFound:
        return False


def find_base(client: docker.DockerClient, mode: BaseMode = "auto") -> str | None:
    """The base image already present locally for this mode, without pulling or building anything."""
    candidates = {"auto": (PUBLIC_BASE, debootstrap_tag()), "public": (PUBLIC_BASE,), "debootstrap": (debootstrap_tag(),)}
    return next((ref for ref in candidates[mode] if _exists(client, ref)), None)


def ensure_base(client: docker.DockerClient, mode: BaseMode = "auto") -> str:
    """Return a local base image reference, pulling or building it when missing."""
    found = find_base(client, mode)
    if found:
        return found
    if mode in ("auto", "public"):
        try:
            with timed(log, "image.pull", ref=PUBLIC_BASE):
                client.images.pull(PUBLIC_BASE)
            return PUBLIC_BASE
        except docker.errors.APIError as exc:
            if mode == "public":
                raise ImageError(f"cannot pull {PUBLIC_BASE}: {exc.explanation or exc}") from None
            log.info("image.pull_unavailable", ref=PUBLIC_BASE, reason=str(exc.explanation or exc)[:200])
    return ensure_suite_base(client, SUITE)


def ensure_suite_base(client: docker.DockerClient, suite: str) -> str:
    """The debootstrap base of a Debian suite, built when missing (no public image is tried)."""
    tag = debootstrap_tag(suite)
    if _exists(client, tag):
        return tag
    with one_build_at_a_time(tag):
        return tag if _exists(client, tag) else build_debootstrap_base(client, suite)


def installed_packages(rootfs: Path) -> str:
    """`name version arch` per installed package of a Debian tree, sorted, from its dpkg status file."""
    lines = []
    for stanza in (rootfs / "var/lib/dpkg/status").read_text().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line.startswith(" "))
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            lines.append(f"{fields['Package']} {fields.get('Version', '?')} {fields.get('Architecture', '?')}")
    return "".join(f"{line}\n" for line in sorted(lines))


def package_drift(recorded: str, built: str) -> dict[str, tuple[str | None, str | None]]:
    """name -> (recorded `version arch`, built `version arch`) for every package that differs (None: absent)."""
    def parse(text: str) -> dict[str, str]:
        return {parts[0]: " ".join(parts[1:]) for parts in (line.split() for line in text.splitlines()) if parts}

    before, after = parse(recorded), parse(built)
    return {n: (before.get(n), after.get(n)) for n in sorted(set(before) | set(after)) if before.get(n) != after.get(n)}


def report_drift(suite: str, manifest: str) -> None:
    recorded = paths.images_root() / "base" / f"{suite}.packages"
    if not recorded.is_file():
        log.warning("image.base_unrecorded", suite=suite, hint=f"no {recorded} to compare the base with")
        return
    drift = package_drift(recorded.read_text(), manifest)
    if drift:
        log.warning("image.base_drift", suite=suite, packages=len(drift), recorded=str(recorded),
                    changed={n: f"{a or '-'} -> {b or '-'}" for n, (a, b) in list(drift.items())[:40]})
    else:
        log.info("image.base_as_recorded", suite=suite, packages=manifest.count("\n"))


def build_debootstrap_base(client: docker.DockerClient, suite: str = SUITE) -> str:
    """debootstrap a minimal Debian suite into a temporary folder and import it as the base image."""
    if shutil.which("debootstrap") is None:
        raise ImageError("no registry answers and debootstrap is missing: apt-get install debootstrap")
    tag = debootstrap_tag(suite)
    with tempfile.TemporaryDirectory(prefix="sbx-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        cmd = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", suite, str(rootfs), MIRROR]
        with timed(log, "image.debootstrap", suite=suite):
            proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-2000:]
            raise ImageError(f"debootstrap failed (exit {proc.returncode}):\n{tail}")
        manifest = installed_packages(rootfs)
        (rootfs / MANIFEST_IN_IMAGE.lstrip("/")).write_text(manifest)
        report_drift(suite, manifest)
        for rel in _STRIP:
            target = rootfs / rel
            if target.exists():
                shutil.rmtree(target)
                target.mkdir(parents=True)
        tarball = Path(tmp) / "rootfs.tar"
        subprocess.run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."], check=True)
        repo, _, version = tag.partition(":")
        with timed(log, "image.import", tag=tag):
            client.api.import_image_from_file(
                str(tarball), repository=repo, tag=version,
                changes=['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'CMD ["/bin/bash"]',
                         f"LABEL {MANIFEST_LABEL}=sha256:{hashlib.sha256(manifest.encode()).hexdigest()}"],
            )
    if not _exists(client, tag):
        raise ImageError(f"docker import did not produce {tag}")
    return tag
