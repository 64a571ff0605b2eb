"""A logging upstream for the gateway's hostile tests: a raw HTTP/1.1 server that records each request exactly
as it arrived (request line, headers, body size) and answers any of them with a small usage-bearing body, so
a test sees what the upstream was sent, not what a framework made of it."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

#: read by every API's usage parser: 3 input and 2 output tokens
ANSWER = json.dumps({"id": "x", "usage": {"input_tokens": 3, "output_tokens": 2, "prompt_tokens": 3,
                                          "completion_tokens": 2}}).encode()


@dataclass
class Seen:
    method: str
    target: str
    headers: dict[str, str]
    body_bytes: int


@dataclass
class LoggingUpstream:
    seen: list[Seen] = field(default_factory=list)
    #: answer this body instead of ANSWER (None: ANSWER)
    answer: bytes | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                size = int(headers.get("content-length", "0"))
                await reader.readexactly(size)
                self.seen.append(Seen(method, target, headers, size))
                body = self.answer if self.answer is not None else ANSWER
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()


@contextmanager
def logging_upstream() -> Iterator[tuple[LoggingUpstream, str]]:
    """(the upstream, its base URL http://127.0.0.1:PORT), served from a thread of its own."""
    up = LoggingUpstream()
    loop = asyncio.new_event_loop()
    box: dict[str, object] = {}
    ready = threading.Event()

    def run() -> None:
        server = loop.run_until_complete(asyncio.start_server(up._serve, "127.0.0.1", 0))
        box["port"] = server.sockets[0].getsockname()[1]
        ready.set()
        loop.run_forever()
        server.close()
        loop.run_until_complete(server.wait_closed())
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield up, f"http://127.0.0.1:{box['port']}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
