"""Step A of scoring, inside the scorer container. NEVER imported by the host: orchestrator/scoring/container.py
reads this file as text (`paths.incontainer_source`), a setup command copies it to /workspace/train.py, and
the container runs `/opt/sbx/venv/bin/python train.py` from /workspace the way an experiment runs the
agent's train.py: the scored code meets the same command line, interpreter flags, `__main__` module,
`__file__`, `sys.argv`, working folder, user and environment (docs/scoring.md says what still differs).

Trusted until the agent's code runs, in this order:
  1. connect to the host's socket (/run/sbx/score.sock) while /workspace holds only this file, so none of
     the imports below can be shadowed by the agent's modules;
  2. receive the contract (the prediction function's name, numbers per row), then the clean copy of the
     delivered code and the pristine data as one tar (made by the host: relative names, regular files and
     folders only) and unpack it; train.py (this file) is replaced last;
  3. forget the modules imported for this (`sys.modules` as an experiment's train.py finds it) and run the
     agent's train.py in this process's own `__main__` module, whose globals hold nothing of ours; then take
     its prediction function (the contract's: predict_proba, predict, ...) and say READY, or FAILED with
     the traceback Python would have printed;
  4. for each batch the host sends (CSV text, features only), call it and send the values back.
From step 3 on nothing here can be trusted: the host checks every frame, shape and value, and keeps none of
the text it receives once the first batch has been sent.

Frame constants repeat orchestrator/scoring/protocol.py (a test keeps them in step).
"""


def _sbx_score():
    import sys

    baseline = set(sys.modules)
    import io
    import json
    import os
    import socket
    import struct
    import tarfile
    import traceback

    header = struct.Struct(">cI")
    main = sys.modules["__main__"]
    here = os.path.dirname(os.path.abspath(main.__file__))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def send(kind, payload=b""):
        sock.sendall(header.pack(kind, len(payload)) + payload)

    def recv_exact(n):
        buf = bytearray()
        while len(buf) < n:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise SystemExit("sbx scorer: the host closed the connection")
            buf += chunk
        return bytes(buf)

    def recv():
        kind, length = header.unpack(recv_exact(header.size))
        return kind, recv_exact(length) if length else b""

    def send_json(kind, obj):
        send(kind, json.dumps(obj).encode("utf-8", "replace")[: 60 * 1024])

    def text_of(exc):
        try:
            return f"{type(exc).__name__}: {exc}"[:2000]
        except BaseException:  # noqa: BLE001 - a hostile __str__
            return f"{type(exc).__name__}: <unprintable>"

    def traceback_of(exc):
        try:
            tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None  # not our frame
            return "".join(traceback.format_exception(type(exc), exc, tb))[-8000:]
        except BaseException:  # noqa: BLE001
            return text_of(exc) + "\n"

    sock.connect("/run/sbx/score.sock")
    send_json(b"H", {"version": 3, "pid": os.getpid()})

    kind, payload = recv()
    if kind != b"C":
        raise SystemExit(f"sbx scorer: expected the contract, got {kind!r}")
    contract = json.loads(payload.decode("utf-8"))
    predict_name, width = str(contract["predict"]), int(contract["columns"])
    kind, payload = recv()
    if kind != b"T":
        raise SystemExit(f"sbx scorer: expected the repo, got {kind!r}")
    entrypoint = train_csv = None
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:") as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if member.name.startswith("/") or ".." in parts or not (member.isdir() or member.isfile()):
                raise SystemExit(f"sbx scorer: unexpected member {member.name!r}")
            target = os.path.join(here, *parts)
            if member.isdir():
                os.makedirs(target, mode=0o755, exist_ok=True)
                continue
            data = tar.extractfile(member).read()
            if member.name == "train.py":
                entrypoint = data
                continue
            if member.name == "data/train.csv":
                train_csv = data  # pristine: what the batches' dtypes are read from, whatever train.py does
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
            os.chmod(target, 0o755 if member.mode & 0o100 else 0o644)
    del payload
    if entrypoint is None or train_csv is None:
        raise SystemExit("sbx scorer: the repo lacks train.py or data/train.csv")
    path = os.path.join(here, "train.py")
    with open(path, "wb") as f:
        f.write(entrypoint)
    for name in set(sys.modules) - baseline:  # as an experiment's train.py finds them (we keep our references)
        del sys.modules[name]
    namespace = main.__dict__
    namespace["__doc__"] = None
    namespace.pop("_sbx_score", None)
    send(b"S")
    outcome = None
    try:
        code = compile(entrypoint, path, "exec", dont_inherit=True)
        del entrypoint
        exec(code, namespace)  # noqa: S102 - the scored code, in `__main__`, as `python train.py` runs it
    except SystemExit as exc:
        if exc.code is not None and exc.code != 0:
            if not isinstance(exc.code, int):
                sys.stderr.write(f"{exc.code}\n")
            outcome = ("train", f"train.py exited with status {exc.code!r}"[:2000], "")
    except BaseException as exc:  # noqa: BLE001 - the scored code's failure, printed as Python would
        text = traceback_of(exc)
        sys.stderr.write(text)
        outcome = ("train", text_of(exc), text)
    code = entrypoint = None  # noqa: F841 - drop the scored code's objects before the answers are sent
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the scored code may have closed or replaced them
        pass
    if outcome is not None:
        send_json(b"F", {"kind": outcome[0], "error": outcome[1], "tail": outcome[2]})
        return
    predict = namespace.get(predict_name)
    if not callable(predict):
        send_json(b"F", {"kind": "no_predict", "error": f"train.py leaves no callable {predict_name}", "tail": ""})
        return
    send(b"R")

    import numpy as np
    import pandas as pd

    dtypes = dict(pd.read_csv(io.BytesIO(train_csv)).dtypes.items())
    del train_csv
    while True:
        kind, payload = recv()
        if kind == b"E":
            return
        if kind != b"B":
            raise SystemExit(f"sbx scorer: unexpected frame from the host: {kind!r}")
        columns = payload.split(b"\n", 1)[0].decode("utf-8").strip().split(",")
        text = payload.decode("utf-8")
        try:
            frame = pd.read_csv(io.StringIO(text), dtype={c: dtypes[c] for c in columns if c in dtypes})
        except (ValueError, TypeError):
            frame = pd.read_csv(io.StringIO(text))
        rows = len(frame)
        try:
            result = predict(frame)
        except BaseException as exc:  # noqa: BLE001 - the scored code's failure; the host keeps no text of it
            send_json(b"F", {"kind": "predict", "error": type(exc).__name__, "tail": "", "rows": rows,
                             "at": [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(exc.__traceback__)][-8:]})
            return
        try:
            arr = np.ascontiguousarray(np.asarray(result, dtype="<f8"))
        except (ValueError, TypeError):
            send_json(b"F", {"kind": "shape", "error": "", "tail": "", "rows": rows})
            return
        if arr.size > 4 * rows * width + 8 or arr.ndim > 8:
            send_json(b"F", {"kind": "shape", "error": "", "tail": "", "rows": rows})
            return
        try:  # text that happens to parse as numbers ("1.5") is not a number either
            raw = result if isinstance(result, np.ndarray) else np.asarray(result)
            text = raw.dtype.kind in "USa" or (raw.dtype.kind == "O" and any(
                isinstance(v, (str, bytes)) for v in raw.reshape(-1)[: 4 * rows * width + 8]))
        except BaseException:  # noqa: BLE001 - a hostile container type; its values were converted above
            text = False
        if text:
            send_json(b"F", {"kind": "dtype", "error": "", "tail": "", "rows": rows})
            return
        send(b"P", bytes([arr.ndim]) + struct.pack(f"<{arr.ndim}Q", *arr.shape) + arr.tobytes())


_sbx_score()
