"""Where sbx keeps its state on the host, as one value passed explicitly.

A `Home` is made once, at the edge (the CLI reads `$SBX_HOME` and `$SBX_SHARED_DIR` there, and nowhere
else), and handed to everything that reads or writes state: the ledger, the artifact store, run folders,
reports, study locks and logs. A fleet node makes its own `Home` for each job instead of changing the
process's environment.

Layout under `root` (default `./.sbx`):

    ledger.sqlite         the ledger (SQLite, WAL)
    artifacts/            the content-addressed artifact store
    data/<name>/          prepared data sets (data/flights by default)
    runs/<run_id>/        one run's folder: agent.log, delivered/ (the copy-out)
    reports/<study>/      a study's report
    studies/<study>/      a study's lock and its structured log (driver.log)
    images/               image build records (versions.txt per image)

`shared` ($SBX_SHARED_DIR) is the parent of every folder sbx bind-mounts into a container (socket folders,
scorer folders, copies of agent files); None means the system temp folder. When sbx itself runs in a
container that drives the host's engine through its socket (a fleet worker), the engine resolves a bind
mount's source on its own host, so those folders must exist at the same path there.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Home:
    root: Path
    shared: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())
        if self.shared is not None:
            object.__setattr__(self, "shared", Path(self.shared))

    @classmethod
    def from_env(cls, root: Path | str | None = None) -> Home:
        """The home named by `root`, else `$SBX_HOME`, else `./.sbx`; `$SBX_SHARED_DIR` for mount sources."""
        chosen = root if root is not None else os.environ.get("SBX_HOME") or ".sbx"
        shared = os.environ.get("SBX_SHARED_DIR") or None
        return cls(Path(chosen), Path(shared) if shared else None)

    # --- files and folders --------------------------------------------------------------------------

    @property
    def ledger_path(self) -> Path:
        return self.root / "ledger.sqlite"

    @property
    def artifacts_dir(self) -> Path:
        return self.root / "artifacts"

    @property
    def data_root(self) -> Path:
        return self.root / "data"

    def data_dir(self, name: str) -> Path:
        """A prepared data set by name (a task's `data:`)."""
        return self.data_root / name

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id

    def delivered_dir(self, run_id: str) -> Path:
        """A run's copy-out: workspace/, git/train/<sha256>.py, git/repo.bundle, summary.json."""
        return self.run_dir(run_id) / "delivered"

    def report_dir(self, study: str) -> Path:
        return self.root / "reports" / study

    def study_dir(self, study: str) -> Path:
        """A study's lock file and driver log."""
        return self.root / "studies" / study

    @property
    def images_dir(self) -> Path:
        return self.root / "images"

    # --- folders bind-mounted into containers --------------------------------------------------------

    @property
    def mount_parent(self) -> Path:
        """The parent of folders bind-mounted into containers (made when first needed)."""
        import tempfile  # here: tempfile loads shutil, random and the compressors, which reading the ledger never needs

        if self.shared is None:
            return Path(tempfile.gettempdir())
        self.shared.mkdir(parents=True, exist_ok=True)
        return self.shared

    def mount_dir(self, prefix: str) -> Path:
        """A new folder, readable by the container's users (0755), to be bind-mounted; the caller removes it."""
        import tempfile

        path = Path(tempfile.mkdtemp(prefix=_SAFE.sub("-", prefix), dir=self.mount_parent))
        path.chmod(0o755)
        return path
