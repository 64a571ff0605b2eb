"""Small helpers the test packages share."""

from __future__ import annotations

from pathlib import Path


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write each relative path's text under `root` (folders made as needed); returns `root`."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
