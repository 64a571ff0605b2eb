"""`sbx view`'s HTTP server: the standard library's ThreadingHTTPServer bound to 127.0.0.1 only, GET only,
each request on its own read-only ledger connections (SQLite `mode=ro`), so the viewer can never change the
ledger and reads it while a study writes.

    /                      studies, with their runs counted by state (the page reloads while one runs)
    /study/NAME            a study's pairings with the final table's figures, live counts, its report
    /study/NAME/report     the study's HTML report, if `sbx report` or `sbx study run --report` wrote one,
                           its run ids linking to /run/ID here
    /runs?study=&pairing=&state=&verdict=&sort=&page=   every run (attempt), paged, filtered, sorted
    /run/ID                one run: record, scores, grading, audits with evidence, meter, events, transcript

Every page carries a Content-Security-Policy that allows no script, no request anywhere and no form
submission off the page: escaping (autoescape) keeps agent text from being markup, and the policy keeps a
mistake in it from running or sending anything.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import closing
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

from orchestrator.failures import LedgerUnavailable, SbxError
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.ledger.db import connect_read_only
from orchestrator.log import get_logger
from orchestrator.view import pages
from orchestrator.view.queries import RunQuery

log = get_logger(__name__)

T = TypeVar("T")

HOST = "127.0.0.1"
#: scripts none, styles inline only, images only inline data, no requests, forms only to this viewer
PAGE_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
               "base-uri 'none'; frame-ancestors 'none'")
#: the report is sbx's own page: its inline script checks that its inline figures rendered
REPORT_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'unsafe-inline'; "
                 "form-action 'none'; base-uri 'none'; frame-ancestors 'none'")


class NotFound(LookupError):
    """No page at this address (an unknown path, study or run)."""


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = [v for v in params.get(name, []) if v.strip()]
    return values[-1].strip() if values else None


def _page_number(text: str | None) -> int:
    try:
        return max(1, int(text)) if text else 1
    except ValueError:
        raise ValueError("page must be a whole number") from None


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "sbx-view"
    sys_version = ""

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        try:
            status, body, policy = HTTPStatus.OK, *self._route()
        except (NotFound, LedgerUnavailable) as exc:
            status, body, policy = HTTPStatus.NOT_FOUND, self._error("Not found", str(exc)), PAGE_POLICY
        except ValueError as exc:
            status, body, policy = HTTPStatus.BAD_REQUEST, self._error("Bad request", str(exc)), PAGE_POLICY
        except SbxError as exc:
            log.warning("view.page_failed", path=self.path, error=str(exc))
            status, body, policy = HTTPStatus.INTERNAL_SERVER_ERROR, self._error("Error", str(exc)), PAGE_POLICY
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", policy)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        self.send_error(HTTPStatus.METHOD_NOT_ALLOWED, "the viewer is read-only")

    do_PUT = do_DELETE = do_PATCH = do_POST  # noqa: N815

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (http.server's signature)
        log.debug("view.request", line=format % args)

    def _error(self, title: str, message: str) -> str:
        return pages.render("error.html.j2", title=title, message=message, live=False)

    def _route(self) -> tuple[str, str]:
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        params = parse_qs(url.query)
        if parts[:1] == ["study"] and len(parts) == 3 and parts[2] == "report":
            return self._report(parts[1]), REPORT_POLICY
        return self.server.read(lambda v: self._page(v, parts, params)), PAGE_POLICY

    def _report(self, name: str) -> str:
        path = self.server.home.report_dir(name) / pages.REPORT_FILE
        # a study name is one folder under reports/: no separator, no "..", so the path stays inside it
        if "/" in name or name in (".", "..") or not path.is_file():
            raise NotFound(f"no report for study {name!r} (sbx report, or sbx study run --report, writes one)")
        from orchestrator.report.templating import local_run_links

        # the file links its run ids to a viewer's address fixed when it was written; here they go to this one
        return local_run_links(path.read_text(encoding="utf-8", errors="replace"))

    @staticmethod
    def _study_id(v: pages.View, name: str) -> str:
        found = v.ledger.get_study_by_name(name) or v.ledger.get_study(name)
        if found is None:
            raise NotFound(f"no study {name!r} in the ledger")
        return found.study_id

    def _page(self, v: pages.View, parts: list[str], params: dict[str, list[str]]) -> str:
        if not parts:
            return pages.studies_page(v)
        if parts[0] == "study" and len(parts) == 2:
            return pages.study_page(v, self._study_id(v, parts[1]))
        if parts[0] == "run" and len(parts) == 2:
            return pages.run_page(v, v.ledger.find_run(parts[1]).run_id)
        if parts == ["runs"]:
            name = _one(params, "study")
            q = RunQuery(study_id=self._study_id(v, name) if name else None, pairing=_one(params, "pairing"),
                         state=_one(params, "state"), verdict=_one(params, "verdict"),
                         sort=_one(params, "sort") or "created", page=_page_number(_one(params, "page")))
            return pages.runs_page(v, q, name)
        raise NotFound(f"no page at {'/'.join(parts)!r}")


class ViewServer(ThreadingHTTPServer):
    """The viewer on 127.0.0.1:`port` (0: a free port; `url` says which)."""

    daemon_threads = True

    def __init__(self, home: Home, ledger_path: Path, port: int) -> None:
        self.home, self.ledger_path = home, ledger_path
        Ledger(ledger_path, read_only=True).close()  # missing, or at another schema: refused before serving
        super().__init__((HOST, port), _Handler)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"

    def read(self, page: Callable[[pages.View], T]) -> T:
        """`page` on a View with read-only connections of this request's own."""
        with Ledger(self.ledger_path, read_only=True) as ledger, \
                closing(connect_read_only(self.ledger_path)) as conn:
            conn.execute("BEGIN")  # one snapshot for the page's statements
            try:
                return page(pages.View(self.home, ledger, conn))
            finally:
                conn.execute("COMMIT")

    def serve_in_thread(self) -> threading.Thread:
        """Serve on a daemon thread (tests, and anything that wants the viewer beside other work)."""
        thread = threading.Thread(target=self.serve_forever, name="sbx-view", daemon=True)
        thread.start()
        return thread


__all__ = ["HOST", "PAGE_POLICY", "NotFound", "ViewServer"]

