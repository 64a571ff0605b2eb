"""Score one delivered repo on one data set: step A in a fresh scorer container, step B here.

`score_repo` returns a ScoreResult for everything the scored code does, good or bad: a failure of the
agent's code is an `unscorable` result with its reason, never an exception. Exceptions are ours only:
DataError (the prepared data is wrong), InfraError/ScorerError (the engine or the scorer broke; retryable).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import docker
import numpy as np

from orchestrator import paths
from orchestrator.failures import ScorerError, UnscorableArtifact
from orchestrator.log import get_logger
from orchestrator.scoring import protocol
from orchestrator.scoring.batches import compare, plan_batches
from orchestrator.scoring.container import EXIT_SIGKILL, EXIT_SIGXFSZ, INPUT_NAME, ScorerContainer
from orchestrator.scoring.data import HiddenSet, load_hidden, pristine_files
from orchestrator.scoring.metrics import check_predictions, compute_metrics
from orchestrator.scoring.options import ScoreOptions

log = get_logger(__name__)

#: why a run is unscorable; each is the agent's outcome, recorded with its detail
REASONS = {
    "no_train_py": "the artifact has no train.py",
    "bad_artifact": "the artifact is too large or has too many files",
    "train_error": "train.py raised an exception (or exited) while training",
    "no_predict_proba": "train.py left no callable predict_proba",
    "predict_error": "predict_proba raised an exception",
    "timeout": "training or predicting exceeded its time limit",
    "oom": "the kernel's OOM killer stopped the scored code at the memory limit",
    "wrong_shape": "predict_proba did not return one number per row",
    "not_finite": "predict_proba returned NaN or infinite values",
    "out_of_range": "predict_proba returned values outside [0, 1]",
    "output_flooding": "the scored code wrote more than the output limit",
    "crashed": "the scored process died without an exception (signal, os._exit)",
    "protocol_error": "the scored process wrote something the scorer's protocol does not allow",
}
MAX_FILES = 10_000
MAX_BYTES = 512 << 20


@dataclass(frozen=True)
class ScoreResult:
    dataset: str
    status: str                      # scored | unscorable
    reason: str | None = None        # a key of REASONS when unscorable
    detail: str | None = None        # traceback's tail or what was wrong
    auc: float | None = None
    ap: float | None = None
    auc_se: float | None = None
    n: int | None = None
    positives: int | None = None
    seconds: float = 0.0             # the whole scoring, wall clock
    cpu_seconds: float | None = None  # CPU time of the scorer container (its cgroup), when readable
    train_seconds: float | None = None
    predict_seconds: float | None = None
    rows_checked: int | None = None
    rows_changed: int | None = None
    max_abs_change: float | None = None
    tolerance: float | None = None
    batch_dependent: bool | None = None
    batch_rows: int | None = None
    seed: int | None = None
    artifact_sha256: str | None = None
    train_sha256: str | None = None
    image: str | None = None
    eval_score: float | None = None  # what train.py printed as its eval score when the scorer retrained it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScoreResult:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


# --- the clean copy ----------------------------------------------------------------------------------------


def clean_copy(src: Path, dest: Path, data_files: dict[str, Path]) -> tuple[str, str]:
    """Copy the regular files of a delivered repo (no links, no .git, nothing under data/) into `dest`,
    readable by uid 1000, then add the pristine data files. Returns (artifact sha256, train.py sha256)."""
    if src.is_file():  # a single train.py named by the user (a link to one is fine here)
        entries = [(Path("train.py"), src.resolve())]
    else:
        entries = []
        for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
            rel_dir = Path(dirpath).relative_to(src)
            dirnames[:] = sorted(d for d in dirnames if d != ".git" and not (rel_dir == Path(".") and d == "data")
                                 and not Path(dirpath, d).is_symlink())
            for name in sorted(filenames):
                path = Path(dirpath, name)
                st = path.lstat()
                if stat.S_ISREG(st.st_mode):
                    entries.append((rel_dir / name, path))
                if len(entries) > MAX_FILES:
                    raise UnscorableArtifact("bad_artifact", f"more than {MAX_FILES} files")
    if not any(rel == Path("train.py") for rel, _ in entries):
        raise UnscorableArtifact("no_train_py", f"{src} holds no train.py")
    total = 0
    digest = hashlib.sha256()
    train_sha = ""
    dest.mkdir(mode=0o755)
    for rel, path in sorted(entries):
        data, mode = _read_regular(path, MAX_BYTES - total)
        total += len(data)
        digest.update(rel.as_posix().encode() + b"\0" + hashlib.sha256(data).digest())
        if rel == Path("train.py"):
            train_sha = hashlib.sha256(data).hexdigest()
        target = dest / rel
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755 if mode & 0o100 else 0o644)
    (dest / "data").mkdir(mode=0o755, exist_ok=True)
    for name, path in data_files.items():
        shutil.copyfile(path, dest / "data" / name)
        (dest / "data" / name).chmod(0o644)
    return digest.hexdigest(), train_sha


def _read_regular(path: Path, budget: int) -> tuple[bytes, int]:
    """A regular file's bytes and mode, never through a link, refusing it before reading past `budget`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise UnscorableArtifact("bad_artifact", f"{path.name}: cannot open ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnscorableArtifact("bad_artifact", f"{path.name}: not a regular file")
        if st.st_size > budget:
            raise UnscorableArtifact("bad_artifact", f"more than {MAX_BYTES >> 20} MB of files")
        data = f.read(budget + 1)
    if len(data) > budget:
        raise UnscorableArtifact("bad_artifact", f"more than {MAX_BYTES >> 20} MB of files")
    return data, st.st_mode


# --- step A + B ---------------------------------------------------------------------------------------------


class _Timer:
    def __init__(self) -> None:
        self.train_start = self.train_end = self.predict_end = 0.0


def score_repo(client: docker.DockerClient, repo_dir: Path, data_dir: Path, dataset: str = "holdout", *,
               image: str, options: ScoreOptions | None = None, run_id: str | None = None,
               target: str = "dep_delayed_15min", positive: str = "Y",
               eval_line: str = r"Eval AUC:\s*([0-9]*\.?[0-9]+)") -> ScoreResult:
    """Score the train.py in `repo_dir` (a repo folder or a train.py) on `dataset` of the prepared `data_dir`.

    Whatever the scored code does comes back as a ScoreResult (`scored`, or `unscorable` with a reason of
    REASONS). Raises only for our side: DataError (prepared data), InfraError/ScorerError (engine, scorer)."""
    options = options or ScoreOptions()
    start = time.monotonic()
    hidden = load_hidden(data_dir, dataset, target=target, positive=positive)
    base: dict[str, Any] = {"dataset": dataset, "batch_rows": options.batch_rows, "seed": options.seed,
                            "tolerance": options.tolerance, "image": image}
    with tempfile.TemporaryDirectory(prefix="sbx-score-", dir=paths.shared_dir()) as tmp:  # bind-mounted
        host_dir = Path(tmp)
        host_dir.chmod(0o755)
        try:
            artifact_sha, train_sha = clean_copy(Path(repo_dir), host_dir / INPUT_NAME, pristine_files(data_dir))
        except UnscorableArtifact as exc:
            return _unscorable(exc, base, start, None, _Timer())
        base.update(artifact_sha256=artifact_sha, train_sha256=train_sha)
        timer = _Timer()
        with ScorerContainer(client, image, host_dir, options, run_id=run_id, dataset=dataset,
                             target=target) as box:
            try:
                check, metrics = _drive(box, hidden, options, timer)
            except UnscorableArtifact as exc:
                result = _unscorable(exc, base, start, box, timer)
            except _Died as died:
                result = _unscorable(_post_mortem(box, died), base, start, box, timer)
            else:
                base["cpu_seconds"] = box.cpu_seconds()
                base["eval_score"] = _eval_score(box.output_head(), eval_line)
                result = ScoreResult(
                    status="scored", auc=metrics.auc, ap=metrics.ap, auc_se=metrics.auc_se, n=metrics.n,
                    positives=metrics.positives, seconds=round(time.monotonic() - start, 3),
                    train_seconds=round(timer.train_end - timer.train_start, 3),
                    predict_seconds=round(timer.predict_end - timer.train_end, 3),
                    rows_checked=check.rows_checked, rows_changed=check.rows_changed,
                    max_abs_change=check.max_abs_change, batch_dependent=check.batch_dependent, **base)
    result = replace(result, seconds=round(time.monotonic() - start, 3))  # container removal included
    log.info("score.done", run_id=run_id, dataset=dataset, status=result.status, reason=result.reason,
             auc=result.auc, batch_dependent=result.batch_dependent, seconds=result.seconds)
    return result


def _eval_score(output: str, eval_line: str) -> float | None:
    """The eval score train.py printed while the scorer retrained it (self-reported: for selection only)."""
    m = re.search(eval_line, output)
    try:
        return float(m.group(1)) if m else None
    except ValueError:
        return None


class _Died(Exception):
    """The runner's process ended or stopped answering; post-mortem decides why."""

    def __init__(self, phase: str, timed_out: bool, note: str) -> None:
        super().__init__(note)
        self.phase, self.timed_out, self.note = phase, timed_out, note


def _drive(box: ScorerContainer, hidden: HiddenSet, options: ScoreOptions, timer: _Timer):
    box.start()
    conn = box.accept()
    setup_deadline = time.monotonic() + options.connect_timeout_s
    try:
        hello = protocol.recv_frame(conn, deadline=setup_deadline)
        if hello.kind != protocol.HELLO or hello.json().get("version") != protocol.PROTOCOL_VERSION:
            raise ScorerError(f"the scorer runner speaks another protocol: {hello.payload[:200]!r}")
        started = protocol.recv_frame(conn, deadline=setup_deadline)
        if started.kind != protocol.STARTED:
            raise ScorerError(f"the scorer runner sent {started.kind!r} instead of STARTED")
    except (protocol.PeerClosed, protocol.Deadline, protocol.ProtocolViolation) as exc:
        raise ScorerError(f"the scorer runner failed before the scored code ran ({exc}): "
                          f"{box.output_tail()}") from None

    timer.train_start = time.monotonic()
    try:
        frame = protocol.recv_frame(conn, deadline=timer.train_start + options.train_timeout_s)
    except protocol.Deadline:
        raise _Died("training", True, f"train.py ran longer than {options.train_timeout_s:g}s") from None
    except protocol.PeerClosed:
        raise _Died("training", False, "the process ended while train.py ran") from None
    except protocol.ProtocolViolation as exc:
        raise UnscorableArtifact("protocol_error", str(exc)) from None
    timer.train_end = time.monotonic()
    if frame.kind == protocol.FAILED:
        raise _failure(frame.json(), "training", options.output_limit_mb)
    if frame.kind != protocol.READY:
        raise UnscorableArtifact("protocol_error", f"expected READY after training, got {frame.kind!r}")

    plan = plan_batches(hidden.n, batch_rows=options.batch_rows, check_rows=options.check_rows,
                        seed=options.seed, singles=options.check_singles)
    main = np.full(hidden.n, np.nan)
    again: dict[int, float] = {}
    deadline = timer.train_end + options.predict_timeout_s
    for rows, is_check in zip(plan.batches, plan.is_check, strict=True):
        try:
            protocol.send_frame(conn, protocol.BATCH, hidden.batch_csv(rows), deadline=deadline)
            frame = protocol.recv_frame(conn, deadline=deadline, preds_rows=len(rows))
        except protocol.Deadline:
            raise _Died("predicting", True, f"predicting took longer than {options.predict_timeout_s:g}s") from None
        except protocol.PeerClosed:
            raise _Died("predicting", False, f"the process ended while predicting a batch of {len(rows)} rows") from None
        except protocol.ProtocolViolation as exc:
            raise UnscorableArtifact("protocol_error", str(exc)) from None
        if frame.kind == protocol.FAILED:
            raise _failure(frame.json(), "predicting", options.output_limit_mb)
        if frame.kind != protocol.PREDS:
            raise UnscorableArtifact("protocol_error", f"expected predictions, got {frame.kind!r}")
        try:
            shape, values = protocol.decode_preds(frame.payload)
        except protocol.ProtocolViolation as exc:
            raise UnscorableArtifact("protocol_error", str(exc)) from None
        values = check_predictions(shape, values, len(rows))
        if is_check:
            again.update(zip(rows.tolist(), values.tolist(), strict=True))
        else:
            main[rows] = values
    timer.predict_end = time.monotonic()
    with _quiet():
        protocol.send_frame(conn, protocol.END, deadline=time.monotonic() + 5)
    if np.isnan(main).any():  # cannot happen with a correct plan; guard the metric anyway
        raise ScorerError("the batch plan left rows without a prediction")
    check_idx = plan.check_rows
    check = compare(main, check_idx, np.array([again[int(r)] for r in check_idx], dtype=float), options.tolerance)
    return check, compute_metrics(hidden.labels, main)


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> bool:
        return exc_type is not None and issubclass(exc_type, (protocol.PeerClosed, protocol.Deadline))


def _failure(report: dict[str, Any], phase: str, limit_mb: int) -> UnscorableArtifact:
    kind = str(report.get("kind", ""))
    error = str(report.get("error", ""))[:2000]
    tail = str(report.get("tail", ""))[-4000:]
    detail = f"{error}\n{tail}".strip() if tail and error not in tail else (tail or error)
    reason = {"train": "train_error", "predict": "predict_error", "no_predict": "no_predict_proba",
              "output": "output_flooding", "shape": "wrong_shape"}.get(kind)
    if reason is None:
        return UnscorableArtifact("protocol_error", f"unknown failure kind {kind!r} during {phase}")
    if reason == "output_flooding":
        detail = f"the output reached the {limit_mb} MB limit during {phase}\n{detail}".strip()
    if reason == "predict_error" and "rows" in report:
        detail = f"in a batch of {report['rows']} rows: {detail}"
    return UnscorableArtifact(reason, detail)


def _post_mortem(box: ScorerContainer, died: _Died) -> UnscorableArtifact:
    """Why the runner's process stopped answering: timeout, output flooding, OOM, or another death."""
    if died.timed_out:
        _, tail = box.output_facts()
        return UnscorableArtifact("timeout", f"{died.note}\n{tail}".strip())
    code = box.exit_code(wait_s=5.0)
    size, tail = box.output_facts()
    limit = box.options.output_limit_mb << 20
    if code == EXIT_SIGXFSZ or (size is not None and size >= limit):
        return UnscorableArtifact("output_flooding", f"the output reached the {box.options.output_limit_mb} MB "
                                                     f"limit during {died.phase} (exit {code})")
    oom = box.oom_killed()
    if oom or (code == EXIT_SIGKILL and oom is None):
        return UnscorableArtifact("oom", f"killed at the {box.options.memory_mb} MB memory limit during "
                                         f"{died.phase} (exit {code})\n{tail}".strip())
    return UnscorableArtifact("crashed", f"{died.note} (exit {code})\n{tail}".strip())


def _unscorable(exc: UnscorableArtifact, base: dict[str, Any], start: float, box: ScorerContainer | None,
                timer: _Timer) -> ScoreResult:
    train_s = round(timer.train_end - timer.train_start, 3) if timer.train_end else None
    cpu = box.cpu_seconds() if box is not None else None
    return ScoreResult(status="unscorable", reason=exc.reason, detail=exc.detail[-4000:] or None,
                       seconds=round(time.monotonic() - start, 3), train_seconds=train_s, cpu_seconds=cpu, **base)
