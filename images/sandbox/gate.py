# sbx CPU-meter gate. Runs in every Python process of the sandbox before any user code: a `.pth` line in
# each site-packages folder (named to run first) and the interpreter's sitecustomize execute this file.
# Inside an sbx run (/run/sbx is mounted by the host) it connects to the host's gate socket; the host
# reads our pid with SO_PEERCRED, moves us into the metered `py` cgroup (children inherit it) and
# answers OK, or DENY once the budget is spent. An unreachable meter means DENY: the gate fails closed.
# Only builtin or stdlib-path modules are used, with sys.path narrowed to the stdlib while importing,
# so PYTHONPATH cannot shadow what the gate relies on.
def _sbx_gate():
    import sys

    if getattr(sys, "_sbx_gate_ran", False):
        return
    sys._sbx_gate_ran = True
    import posix

    sock_dir = "/run/sbx"
    try:
        posix.stat(sock_dir)
    except OSError:
        return  # not inside an sbx run: nothing to meter
    stdlib = "%s/lib/python%d.%d" % (sys.base_prefix, sys.version_info[0], sys.version_info[1])
    saved = sys.path[:]
    sys.path[:] = [stdlib + "/lib-dynload", stdlib]
    try:
        import _socket
    except ImportError as exc:
        _socket = None
        reply = b"DENY the gate cannot load _socket: " + str(exc).encode()
    finally:
        sys.path[:] = saved
    if _socket is not None:
        token = posix.environ.get(b"SBX_GATE_TOKEN", b"-")[:64]
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        reply = b""
        try:
            # Blocking, with the kernel's timeouts: a connect waits for room in the host's accept queue (a
            # burst of Pythons starting at once), where a Python timeout made it nonblocking and a full queue
            # failed at once with EAGAIN: a refused Python. 60 s each way, then the gate fails closed.
            timeval = (60).to_bytes(8, sys.byteorder) + bytes(8)  # struct timeval on 64-bit Linux
            s.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDTIMEO, timeval)
            s.setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVTIMEO, timeval)
            s.connect(sock_dir + "/gate.sock")
            s.sendall(b"GATE " + token + b"\n")
            while not reply.endswith(b"\n") and len(reply) < 4096:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except OSError as exc:
            reply = b"DENY the CPU meter is unreachable (" + str(exc).encode() + b")"
        finally:
            s.close()
        if not reply:
            reply = b"DENY the CPU meter closed the connection"
    if reply.startswith(b"OK"):
        return
    posix.write(2, b"sbx: Python refused by the CPU meter: " + reply[5:].strip() + b"\n")
    posix._exit(97)


_sbx_gate()
del _sbx_gate
