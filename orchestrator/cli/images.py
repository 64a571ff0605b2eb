"""`sbx images build`: make the sandbox and scorer images (offline when no registry answers)."""

from __future__ import annotations

import argparse

from orchestrator.images.build import EXTRA, TARGETS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("images", help="build the sandbox and scorer images (and the fleet image)")
    isub = p.add_subparsers(dest="images_command", required=True, metavar="ACTION")
    b = isub.add_parser("build", help="build images tagged by a hash of their inputs (skips unchanged ones)")
    b.add_argument("targets", nargs="*", default=[], metavar="TARGET",
                   help=f"which images (default: {', '.join(TARGETS)}; also: {', '.join(EXTRA)}, the Ray node "
                        "image of docker-compose.yml)")
    b.add_argument("--base", choices=["auto", "public", "debootstrap"], default="auto",
                   help="auto: a local or pullable python:3.11-slim-bookworm, else a Debian base made with debootstrap")
    b.add_argument("--force", action="store_true", help="rebuild even when the tag for these inputs exists")
    b.add_argument("--versions", action="store_true", help="print the package versions recorded in each image")
    b.set_defaults(handler=_build)


def _build(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.images.build import build_images

    targets = tuple(args.targets) or TARGETS
    for img in build_images(engine.client(), targets, base_mode=args.base, force=args.force):
        state = "built" if img.built else "up to date"
        print(f"{img.name:8s} {img.tag}  {img.size_bytes / 1e6:.0f} MB  {state} in {img.seconds:.1f}s")
        if args.versions:
            print("".join(f"    {line}\n" for line in img.versions.splitlines()))
    return 0
