"""Step A of scoring, inside the scorer container: run the delivered train.py, answer the host's batches.

Trusted code that becomes untrusted the moment train.py runs in its process. Its order matters:
  1. connect to the host's socket first (the host accepts one connection, then removes the listener),
     before anything of the agent is on disk where Python could import it;
  2. copy the repo from the read-only input folder into the writable work folder;
  3. send fd 1 and 2 to a file on /tmp and cap every file size (RLIMIT_FSIZE, soft = hard): a flood dies
     of SIGXFSZ instead of filling a disk;
  4. learn the column dtypes from the pristine data/train.csv, before train.py could change it;
  5. run train.py as __main__ from the repo folder, take its predict_proba, say READY (or why not);
  6. for each batch the host sends (CSV text, features only), call predict_proba and send the values back.
The host trusts nothing it receives: it checks every frame, shape and value itself.

Standard library, numpy and pandas only. The frame constants repeat orchestrator/scoring/protocol.py.
"""

import json
import os
import resource
import runpy
import shutil
import signal
import socket
import struct
import sys
import traceback

PROTOCOL_VERSION = 1
HEADER = struct.Struct(">cI")
HELLO, STARTED, READY, FAILED, PREDS = b"H", b"S", b"R", b"F", b"P"
BATCH, END = b"B", b"E"

SOCKET = os.environ.get("SBX_SCORE_SOCKET", "/run/sbx-score/score.sock")
INPUT_REPO = os.environ.get("SBX_SCORE_INPUT", "/run/sbx-score/repo")
WORK_REPO = os.environ.get("SBX_SCORE_REPO", "/work/repo")
OUTPUT = os.environ.get("SBX_SCORE_OUTPUT", "/tmp/sbx-output.log")
OUTPUT_LIMIT = int(os.environ.get("SBX_SCORE_OUTPUT_LIMIT", str(64 << 20)))
TARGET = os.environ.get("SBX_SCORE_TARGET", "dep_delayed_15min")
PREDICT = os.environ.get("SBX_SCORE_PREDICT", "predict_proba")
ENTRYPOINT = os.environ.get("SBX_SCORE_ENTRYPOINT", "train.py")
TAIL = 4000


def send(sock, kind, payload=b""):
    sock.sendall(HEADER.pack(kind, len(payload)) + payload)


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("the host closed the connection")
        buf += chunk
    return bytes(buf)


def recv(sock):
    kind, length = HEADER.unpack(recv_exact(sock, HEADER.size))
    return kind, recv_exact(sock, length) if length else b""


def send_json(sock, kind, obj):
    send(sock, kind, json.dumps(obj).encode("utf-8")[: 60 * 1024])


def tail_of_traceback():
    text = traceback.format_exc()
    return text[-TAIL:]


def encode_preds(arr):
    return bytes([arr.ndim]) + struct.pack(f"<{arr.ndim}Q", *arr.shape) + arr.tobytes()


def flooded(exc):
    if isinstance(exc, OSError) and exc.errno == 27:  # EFBIG: SIGXFSZ was ignored
        return True
    try:
        return os.fstat(1).st_size >= OUTPUT_LIMIT
    except OSError:
        return False


def main():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(SOCKET)
    send_json(sock, HELLO, {"version": PROTOCOL_VERSION, "pid": os.getpid()})

    shutil.copytree(INPUT_REPO, WORK_REPO, dirs_exist_ok=True)
    out = os.open(OUTPUT, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 (lives as long as the process)
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_LIMIT, OUTPUT_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # CPython ignores it; a flood should end the process

    import io

    import numpy as np
    import pandas as pd

    os.chdir(WORK_REPO)
    train_dtypes = pd.read_csv(os.path.join("data", "train.csv")).dtypes
    dtypes = {c: t for c, t in train_dtypes.items() if c != TARGET}
    sys.path.insert(0, WORK_REPO)
    sys.argv = [ENTRYPOINT]

    send(sock, STARTED)
    try:
        module = runpy.run_path(ENTRYPOINT, run_name="__main__")
    except BaseException as exc:  # noqa: BLE001 (the agent's failure, reported with its traceback's tail)
        kind = "output" if flooded(exc) else "train"
        if isinstance(exc, SystemExit):
            error = f"train.py raised SystemExit({exc.code!r}) before predict_proba could be taken"
        else:
            error = f"{type(exc).__name__}: {exc}"
        send_json(sock, FAILED, {"kind": kind, "error": error[:2000], "tail": tail_of_traceback()})
        return
    predict = module.get(PREDICT)
    if not callable(predict):
        send_json(sock, FAILED, {"kind": "no_predict", "error": f"train.py leaves no callable {PREDICT}",
                                 "tail": ""})
        return
    del module
    sys.stdout.flush()
    if flooded(None):  # a child process may have hit the limit while train.py carried on
        send_json(sock, FAILED, {"kind": "output", "error": "the output reached the limit", "tail": ""})
        return
    send(sock, READY)

    while True:
        kind, payload = recv(sock)
        if kind == END:
            return
        if kind != BATCH:
            raise SystemExit(f"unexpected frame from the host: {kind!r}")
        text = payload.decode("utf-8")
        try:
            frame = pd.read_csv(io.StringIO(text), dtype=dtypes)
        except (ValueError, TypeError):
            frame = pd.read_csv(io.StringIO(text))
        rows = len(frame)
        try:
            result = predict(frame)
        except BaseException as exc:  # noqa: BLE001 (the agent's failure)
            kind = "output" if flooded(exc) else "predict"
            send_json(sock, FAILED, {"kind": kind, "error": f"{type(exc).__name__}: {exc}"[:2000],
                                     "tail": tail_of_traceback(), "rows": rows})
            return
        try:
            arr = np.ascontiguousarray(np.asarray(result, dtype="<f8"))
        except (ValueError, TypeError) as exc:
            send_json(sock, FAILED, {"kind": "shape", "tail": "", "rows": rows,
                                     "error": f"predict_proba returned {type(result).__name__}, not numbers: {exc}"})
            return
        if arr.size > 4 * rows + 8 or arr.ndim > 8:
            send_json(sock, FAILED, {"kind": "shape", "tail": "", "rows": rows,
                                     "error": f"predict_proba returned shape {arr.shape} for {rows} rows"})
            return
        send(sock, PREDS, encode_preds(arr))


if __name__ == "__main__":
    main()
