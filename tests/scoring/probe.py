"""Drive one scorer container by hand and read what the scored code put into its predictions.

Tests that need to know what the scored code saw inside the scorer (its environment, the files it could
find) cannot read it from the score any more: no text leaves the scorer once a batch was sent. The one
channel out is the predictions, and here the test is the host: `predictions_of` retrains `source` in a real
scorer container (the same ScorerContainer and runner a scoring uses), sends one batch and returns the
values; `decode` turns values made by `ENCODE` (bytes of a JSON document, one per row) back into the JSON.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np

from orchestrator.scoring import protocol
from orchestrator.scoring.artifact import select_code
from orchestrator.scoring.container import ScorerContainer
from orchestrator.scoring.data import load_hidden, pristine_files
from orchestrator.scoring.options import ScoreOptions

#: appended to a train.py whose module-level FINDINGS (a dict) should come back: predict_proba returns the
#: JSON's bytes, one per row, as values in [0, 1]
ENCODE = '''

def predict_proba(df):
    import json as _json
    import numpy as _np
    data = _json.dumps(FINDINGS, sort_keys=True).encode()
    if len(data) + 4 > len(df):
        raise ValueError("findings too long for the batch")
    out = _np.zeros(len(df))
    out[:4] = [b / 255 for b in len(data).to_bytes(4, "big")]
    out[4:4 + len(data)] = _np.frombuffer(data, dtype=_np.uint8) / 255
    return out
'''


def decode(values: np.ndarray) -> dict:
    raw = np.rint(values * 255).astype(np.uint8).tobytes()
    n = int.from_bytes(raw[:4], "big")
    return json.loads(raw[4:4 + n].decode())


def predictions_of(client, image: str, data_dir: Path, source: str, *, rows: int = 3000,
                   options: ScoreOptions | None = None, run_id: str = "probe", experiment: int = 1,
                   extra_files: dict[str, str] | None = None) -> np.ndarray:
    """Retrain `source` as train.py in a scorer container and return its predictions for the first `rows`
    holdout rows, sent as one batch."""
    options = options or ScoreOptions()
    hidden = load_hidden(data_dir, "holdout")
    with tempfile.TemporaryDirectory(prefix="sbx-probe-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        (repo / "train.py").write_text(source)
        for rel, text in (extra_files or {}).items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        tar = select_code(repo).tar(pristine_files(data_dir))
        sock_dir = Path(tmp) / "sock"
        sock_dir.mkdir(mode=0o755)
        with ScorerContainer(client, image, sock_dir, options, run_id=run_id, dataset="holdout",
                             env_run_id=run_id, experiment=experiment) as box:
            box.start()
            conn = box.accept()
            deadline = time.monotonic() + 300
            assert protocol.recv_frame(conn, deadline=deadline).kind == protocol.HELLO
            protocol.send_frame(conn, protocol.CONFIG, b'{"predict": "predict_proba", "columns": 1}', deadline=deadline)
            protocol.send_frame(conn, protocol.REPO, tar, deadline=deadline)
            assert protocol.recv_frame(conn, deadline=deadline).kind == protocol.STARTED
            frame = protocol.recv_frame(conn, deadline=deadline)
            if frame.kind != protocol.READY:
                box.output.settle()
                raise AssertionError(f"not ready: {frame.kind!r} {frame.payload[:3000]!r}\n{box.output.snapshot()}")
            ids = np.arange(min(rows, hidden.n))
            protocol.send_frame(conn, protocol.BATCH, hidden.batch_csv(ids), deadline=deadline)
            frame = protocol.recv_frame(conn, deadline=deadline, preds_rows=len(ids))
            assert frame.kind == protocol.PREDS, frame.payload[:2000]
            return protocol.decode_preds(frame.payload)[1]
