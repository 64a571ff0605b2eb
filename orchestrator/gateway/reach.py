"""Does a model endpoint answer at all? A TCP connection to its base URL's host and port, nothing sent.

`sbx study plan` asks this of every endpoint a study's pairings use, so a stopped stand-in or a wrong
`base_url` is refused before any run, with the endpoint and its address named. A connection costs nothing and
needs no key; whether the endpoint also serves the model and the key is good is `sbx endpoints check`'s call
(a real, paid request).
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from orchestrator.failures import EndpointUnreachable
from orchestrator.specs.endpoints import Endpoint

#: the longest a plan waits for one endpoint's connection (its own connect_timeout_s when shorter)
PLAN_TIMEOUT_S = 5.0


def host_port(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    assert parts.hostname is not None  # Endpoint's validator requires a host
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def unreachable_message(ep: Endpoint, error: str, endpoints_file: str | None = None) -> str:
    """What a person reads when `ep` did not answer: which endpoint, at which address, why, and the fix."""
    host, port = host_port(ep.base_url)
    return f"endpoint {ep.name} at {ep.base_url} does not answer ({host}:{port}: {error}): {fix_for(ep, endpoints_file)}"


def fix_for(ep: Endpoint, endpoints_file: str | None = None) -> str:
    """What to do about an endpoint that takes no connection."""
    where = f" in {endpoints_file}" if endpoints_file else ""
    # a stand-in endpoint (the gateway sends it the run's headers) is one the user starts on this machine
    start = (f"start it (the stand-in: sbx model serve --port {host_port(ep.base_url)[1]})" if ep.run_headers
             else "check the network")
    return f"{start} or fix its base_url{where}"


def check_reachable(ep: Endpoint, *, timeout_s: float = PLAN_TIMEOUT_S, endpoints_file: str | None = None) -> None:
    """Raise EndpointUnreachable unless something accepts a TCP connection at `ep`'s host and port."""
    host, port = host_port(ep.base_url)
    try:
        with socket.create_connection((host, port), timeout=min(timeout_s, ep.connect_timeout_s)):
            return
    except TimeoutError:
        error = f"no connection within {min(timeout_s, ep.connect_timeout_s):g} s"
    except OSError as exc:  # refused, no route, no such host
        error = exc.strerror or type(exc).__name__
    raise EndpointUnreachable(unreachable_message(ep, error, endpoints_file))


__all__ = ["PLAN_TIMEOUT_S", "check_reachable", "fix_for", "host_port", "unreachable_message"]
