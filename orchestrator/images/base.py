"""The base image: a public Python image where a registry answers, else a Debian base made here.

No registry answers on some machines (measured: `docker pull` fails in 0.05 s on DNS). Then the base is
made from Debian's own packages: a minimal suite with Python and git bootstrapped into a folder (by
mmdebstrap where it is installed, else debootstrap), stripped of caches and docs, and `docker import`ed.
Both bootstrappers install the same packages (images/base/<suite>.packages, compared after every build);
mmdebstrap, given its merged-usr hook, does it in about half the CPU (measured on bookworm: 31 CPU-s and
99 s against debootstrap's 56 CPU-s and 147 s, side by side on a loaded 2-core machine). The public base
and the bookworm base are Debian bookworm with CPython 3.11.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import docker
import docker.errors
import docker.models.images

from orchestrator import paths
from orchestrator.failures import ImageError
from orchestrator.images.recipe import Recipe, ensure, existing
from orchestrator.log import get_logger, timed

log = get_logger(__name__)

PUBLIC_BASE = "python:3.11-slim-bookworm"
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = ("python3", "python3-venv", "ca-certificates", "git")
# Docs, caches and package lists the image never needs: about 180 MB of the 394 MB bootstrapped tree.
_STRIP = ("var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info")
#: the bootstrappers, preferred first: the one found on PATH makes the base (and is part of its tag)
BOOTSTRAPPERS = ("mmdebstrap", "debootstrap")
#: mmdebstrap's own hook for a merged /usr as debootstrap makes it: without it mmdebstrap installs usrmerge
#: (and three perl libraries) instead of usr-is-merged, five packages away from what debootstrap installs
_MERGED_USR_HOOK = Path("/usr/share/mmdebstrap/hooks/merged-usr")

#: "debian": a Debian base made here; "debootstrap" is its older name, still accepted
BaseMode = Literal["auto", "public", "debian", "debootstrap"]

#: what a Debian base holds, written into it and labelled with its digest: one `name version arch` line
#: per installed package. In one Debian archive a (name, version, arch) names one .deb, whose bytes the
#: bootstrapper checks against the signed Release file, so this list says exactly what the base is made of.
MANIFEST_IN_IMAGE = "/etc/sbx-base-packages.txt"
MANIFEST_LABEL = "sbx.base.packages"
#: images/base/<suite>.packages: the list a base was made of when last recorded; a build that gets other
#: versions (Debian published a point release, and snapshot.debian.org, which would serve the old ones, does
#: not answer from here) says which changed


def bootstrapper() -> str | None:
    """The bootstrapper on PATH that makes a Debian base here (BOOTSTRAPPERS' order), or None."""
    return next((tool for tool in BOOTSTRAPPERS if shutil.which(tool)), None)


def debian_base_tag(suite: str = SUITE, tool: str | None = None) -> str:
    """The Debian base's tag for a suite (bookworm: CPython 3.11; trixie: 3.13, used by task environments),
    made by `tool` (default: the bootstrapper found here). debootstrap's tag is the one it always had."""
    tool = tool or bootstrapper() or BOOTSTRAPPERS[-1]
    made_by = [] if tool == "debootstrap" else [tool]
    recipe = "|".join([suite, "minbase", *PACKAGES, *_STRIP, MANIFEST_IN_IMAGE, *made_by]).encode()
    return f"sbx-base:{hashlib.sha256(recipe).hexdigest()[:12]}"


def _exists(client: docker.DockerClient, ref: str) -> bool:
    return existing(client, ref) is not None


def _suite_tags(suite: str) -> tuple[str, ...]:
    """A suite's Debian base tags, the bootstrapper found here first (a base made by the other one serves too)."""
    return tuple(dict.fromkeys(debian_base_tag(suite, tool) for tool in (bootstrapper(), *BOOTSTRAPPERS) if tool))


def find_suite_base(client: docker.DockerClient, suite: str = SUITE) -> str | None:
    """The suite's Debian base already on the engine, or None."""
    return next((tag for tag in _suite_tags(suite) if _exists(client, tag)), None)


def find_base(client: docker.DockerClient, mode: BaseMode = "auto") -> str | None:
    """The base image already present locally for this mode, without pulling or building anything."""
    public = PUBLIC_BASE if mode in ("auto", "public") and _exists(client, PUBLIC_BASE) else None
    return public or (find_suite_base(client) if mode != "public" else None)


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
    """The Debian base of a suite, made when missing (no public image is tried)."""
    found = find_suite_base(client, suite)
    if found:
        return found
    recipe = suite_base_recipe(suite)
    ensure(client, recipe)
    return recipe.tag


def suite_base_recipe(suite: str = SUITE) -> Recipe:
    """The recipe of a suite's Debian base: its context is the bootstrapped tree as a tarball, and it is made
    by importing that tarball (there is no Dockerfile)."""
    tool = bootstrapper()
    if tool is None:
        raise ImageError("no registry answers and no Debian bootstrapper is installed: "
                         "apt-get install mmdebstrap (or debootstrap)")
    tag = debian_base_tag(suite, tool)
    return Recipe(tag=tag, context=lambda: _bootstrapped(suite, tool), make=_import_base, base=f"{tool}:{suite}")


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


def _bootstrap_command(tool: str, suite: str, rootfs: Path) -> list[str]:
    include = f"--include={','.join(PACKAGES)}"
    if tool == "mmdebstrap":
        return ["mmdebstrap", "--variant=minbase", include, f"--hook-dir={_MERGED_USR_HOOK}", "--format=directory",
                "--quiet", suite, str(rootfs), MIRROR]
    return ["debootstrap", "--variant=minbase", include, suite, str(rootfs), MIRROR]


@contextlib.contextmanager
def _bootstrapped(suite: str, tool: str) -> Iterator[Path]:
    """A temporary folder holding rootfs.tar (the stripped tree) and packages.txt (its manifest)."""
    with tempfile.TemporaryDirectory(prefix="sbx-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        with timed(log, "image.bootstrap", suite=suite, tool=tool):
            proc = subprocess.run(_bootstrap_command(tool, suite, rootfs), capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-2000:]
            raise ImageError(f"{tool} failed (exit {proc.returncode}):\n{tail}")
        manifest = installed_packages(rootfs)
        (rootfs / MANIFEST_IN_IMAGE.lstrip("/")).write_text(manifest)
        (Path(tmp) / "packages.txt").write_text(manifest)
        report_drift(suite, manifest)
        for rel in _STRIP:
            target = rootfs / rel
            if target.exists():
                shutil.rmtree(target)
                target.mkdir(parents=True)
        subprocess.run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(Path(tmp) / "rootfs.tar"), "."],
                       check=True)
        shutil.rmtree(rootfs)
        yield Path(tmp)


def _import_base(client: docker.DockerClient, recipe: Recipe, context: Path) -> docker.models.images.Image:
    manifest = (context / "packages.txt").read_text()
    repo, _, version = recipe.tag.partition(":")
    with timed(log, "image.import", tag=recipe.tag):
        client.api.import_image_from_file(
            str(context / "rootfs.tar"), repository=repo, tag=version,
            changes=['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'CMD ["/bin/bash"]',
                     f"LABEL {MANIFEST_LABEL}=sha256:{hashlib.sha256(manifest.encode()).hexdigest()}"],
        )
    image = existing(client, recipe.tag)
    if image is None:
        raise ImageError(f"docker import did not produce {recipe.tag}")
    return image
