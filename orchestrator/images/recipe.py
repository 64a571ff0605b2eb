"""One image recipe, one way to make it.

Every image family describes its image as a `Recipe`: the tag (a `ContentHash` of its inputs,
orchestrator/images/content.py), the Dockerfile within a context, the build args (its base or parent image
among them), the labels, and how the context is assembled. `ensure(client, recipe)` returns the image under
that tag, building it only when it is missing: under the host's lock of the tag (orchestrator/buildlock.py,
which SBX_BUILD_RECORD records), checked again once the lock is held because another process may have built
it meanwhile, with the context assembled only then (assembling may download a wheelhouse or an agent's
closure). The families: the Debian bases (images/base.py: made by importing a bootstrapped tree, the one
family that is not a `docker build`), the standard sandbox and scorer images and the venv stage
(images/build.py), the fleet image (images/fleet.py), the agent images (images/agents/build.py), and the
environment, task, task-sandbox and an environment's ML images (tasks/environment.py).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.buildlock import one_build_at_a_time
from orchestrator.failures import ImageError
from orchestrator.log import get_logger, timed

if TYPE_CHECKING:
    import docker
    import docker.models.images

log = get_logger(__name__)

#: lines of the build's output an ImageError carries
_TAIL = 40


@dataclass(frozen=True)
class Recipe:
    """What makes one image. `context` assembles the build context when a build is needed and removes
    what it made afterwards; `base` is the image it starts from (logged with the build)."""

    tag: str
    context: Callable[[], AbstractContextManager[Path]]
    dockerfile: str = "Dockerfile"
    target: str | None = None
    buildargs: Mapping[str, str] = field(default_factory=dict)
    #: build args looked up only when building: they choose how, not what (an agent's install stage)
    late_buildargs: Callable[[], Mapping[str, str]] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    base: str | None = None
    #: the engine's network during the build: none by default (everything comes from the context); None for
    #: the engine's default (a Harbor task's Dockerfile may install from a mirror)
    network_mode: str | None = "none"
    timeout_s: float | None = None
    #: how the image is made from its assembled context: a `docker build` (`build` below) unless the family
    #: makes it another way (a Debian base is imported from its tree)
    make: Callable[[docker.DockerClient, Recipe, Path], docker.models.images.Image] | None = None


@dataclass(frozen=True)
class Ensured:
    image: docker.models.images.Image
    built: bool          # False when the tag already existed
    seconds: float       # to find it, or to build it (its context included)


def folder(path: Path) -> Callable[[], AbstractContextManager[Path]]:
    """A context that is a folder already in place (nothing assembled, nothing removed)."""
    return lambda: contextlib.nullcontext(path)


def existing(client: docker.DockerClient, tag: str) -> docker.models.images.Image | None:
    import docker.errors

    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def ensure(client: docker.DockerClient, recipe: Recipe, *, force: bool = False) -> Ensured:
    """The image of `recipe`, built when its tag is missing (or rebuilt with `force`)."""
    start = time.monotonic()
    image = None if force else existing(client, recipe.tag)
    built = False
    if image is None:
        with one_build_at_a_time(recipe.tag):
            image = None if force else existing(client, recipe.tag)  # another process may have built it
            if image is None:
                with recipe.context() as context:
                    image = (recipe.make or build)(client, recipe, context)
                built = True
    return Ensured(image, built, time.monotonic() - start)


def build(client: docker.DockerClient, recipe: Recipe, context: Path) -> docker.models.images.Image:
    """`docker build` of `recipe` from `context` (legacy builder: its COPY cache keys on the files' mtimes,
    which is why contexts are hard links or files written only when they change). An error in the build's
    stream, a timeout or a missing tag at the end is an ImageError with the output's tail."""
    kwargs: dict[str, Any] = {}
    if recipe.target:
        kwargs["target"] = recipe.target
    if recipe.network_mode:
        kwargs["network_mode"] = recipe.network_mode
    buildargs = {**recipe.buildargs, **(recipe.late_buildargs() if recipe.late_buildargs else {})}
    deadline = None if recipe.timeout_s is None else time.monotonic() + recipe.timeout_s
    lines: list[str] = []
    late = {"buildargs": buildargs} if recipe.late_buildargs else {}  # logged: they are in no tag
    with timed(log, "image.build", tag=recipe.tag, base=recipe.base, **late):
        stream = client.api.build(path=str(context), dockerfile=recipe.dockerfile, tag=recipe.tag, rm=True,
                                  forcerm=True, pull=False, buildargs=buildargs,
                                  labels=dict(recipe.labels), decode=True, **kwargs)
        _follow(stream, recipe.tag, lines, deadline, recipe.timeout_s)
    image = existing(client, recipe.tag)
    if image is None:
        raise ImageError(f"build of {recipe.tag} finished without the tag:\n" + "".join(lines[-_TAIL:]))
    return image


def _follow(stream: Iterator[dict[str, Any]], tag: str, lines: list[str], deadline: float | None,
            timeout_s: float | None) -> None:
    for chunk in stream:
        if "error" in chunk:
            for _ in stream:  # the engine ends the stream after an error: read it out so its socket is released
                pass
            raise ImageError(f"building {tag} failed: {chunk['error'].strip()}\n" + "".join(lines[-_TAIL:]))
        if "stream" in chunk:
            lines.append(chunk["stream"])
            if chunk["stream"].startswith("Step "):
                log.debug("image.build_step", tag=tag, step=chunk["stream"].strip())
        if deadline is not None and time.monotonic() > deadline:
            raise ImageError(f"building {tag} took longer than {timeout_s:g}s")
