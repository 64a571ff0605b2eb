# sbx agent launcher: `python3 -I -S launch.py CMD [ARGS...]` (no site, so no gate and nothing from the
# workspace). It asks the host's CPU meter to place this very process in the run's `agent` cgroup (the host
# checks with SO_PEERCRED that the caller is the exec it started, and that the one-time token in
# SBX_GATE_TOKEN is the one it gave), then replaces itself with the agent's command: the agent program,
# and everything it ever starts, begins life in that cgroup. No answer, or any answer but OK: exit 97
# before the agent's command runs.
import os
import socket
import sys


def main():
    argv = sys.argv[1:]
    if not argv:
        os.write(2, b"sbx launcher: no command given\n")
        os._exit(2)
    token = os.environ.pop("SBX_GATE_TOKEN", "-").encode()[:64]
    reply = b""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        # blocking with the kernel's timeouts, as the gate (gate.py): a full accept queue is waited for
        timeval = (60).to_bytes(8, sys.byteorder) + bytes(8)  # struct timeval on 64-bit Linux
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
        s.connect("/run/sbx/gate.sock")
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
    if not reply.startswith(b"OK"):
        os.write(2, b"sbx: the agent could not be placed by the CPU meter: " + (reply[5:].strip() or b"no answer") + b"\n")
        os._exit(97)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, ("sbx launcher: cannot run %s: %s\n" % (argv[0], exc.strerror)).encode())
        os._exit(127)


main()
