# sbx model forwarder. Runs inside the sandbox (network none: loopback only) as the dedicated user sbxfwd,
# started by the host with `docker exec` before the agent, so the agent (uid 1000, no capabilities) can
# neither signal nor trace it. It exposes the run's model-gateway socket, mounted read-only from the host,
# as http://127.0.0.1:PORT: bytes are copied both ways unchanged, the host knows the run from the socket.
# Bounded: at most --max-connections at once (more are closed at accept), and a connection with no bytes
# in either direction for --idle-timeout seconds is closed.
# Stdlib only, and started as `python3 -I -S` so no site hook (the CPU-meter gate, PYTHONPATH) applies:
# its CPU is the container's, not the agent's metered Python.
import argparse
import asyncio
import os
import sys
import time

_CHUNK = 64 * 1024


def _parse(argv):
    p = argparse.ArgumentParser(prog="forwarder")
    p.add_argument("--socket", required=True, help="the run's gateway socket inside the sandbox")
    p.add_argument("--port", type=int, required=True, help="loopback TCP port to listen on")
    p.add_argument("--max-connections", type=int, default=64)
    p.add_argument("--idle-timeout", type=float, default=900.0)
    p.add_argument("--connect-timeout", type=float, default=10.0)
    return p.parse_args(argv)


class Forwarder:
    def __init__(self, args):
        self.args = args
        self.active = 0
        self.refused = 0

    async def handle(self, reader, writer):
        if self.active >= self.args.max_connections:
            self.refused += 1
            writer.close()
            return
        self.active += 1
        up_writer = None
        try:
            try:
                up_reader, up_writer = await asyncio.wait_for(
                    asyncio.open_unix_connection(self.args.socket), self.args.connect_timeout)
            except (OSError, asyncio.TimeoutError) as exc:
                body = ("sbx forwarder: model gateway unreachable: %s\n" % type(exc).__name__).encode()
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: "
                             + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
                await writer.drain()
                return
            last = [time.monotonic()]
            await asyncio.gather(self._pipe(reader, up_writer, last), self._pipe(up_reader, writer, last))
        except (ConnectionError, OSError):
            pass
        finally:
            self.active -= 1
            for w in (writer, up_writer):
                if w is not None:
                    w.close()

    async def _pipe(self, reader, writer, last):
        idle = self.args.idle_timeout
        try:
            while True:
                remaining = idle - (time.monotonic() - last[0])
                if remaining <= 0:
                    break
                try:
                    data = await asyncio.wait_for(reader.read(_CHUNK), remaining)
                except asyncio.TimeoutError:
                    continue  # re-check: the other direction may have been busy meanwhile
                if not data:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                last[0] = time.monotonic()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        writer.close()  # idle for too long (or broken): close both ends


async def _main(args):
    fwd = Forwarder(args)
    server = await asyncio.start_server(fwd.handle, "127.0.0.1", args.port, backlog=128, reuse_address=True)
    os.write(1, b"sbx forwarder ready on 127.0.0.1:%d\n" % args.port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(_main(_parse(sys.argv[1:])))
    except KeyboardInterrupt:
        pass
