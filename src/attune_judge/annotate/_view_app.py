"""``attune-judge view``: the read-only run viewer, a Starlette app beside the labelling one.

Routes (all ``GET``; there is no write route):

- ``/``: every judgments log under ``RUN``, with each one's largest disagreements with the
  people.
- ``/r/{n}/``: one run's judgments, filtered (``model``, ``criterion``, ``status``, ``lo``/
  ``hi`` score range, ``q`` text, ``jv``/``hv`` a confusion cell, ``joined``, ``all``), sorted
  (``sort`` = order, model, item, status, latency, cost, overall, score, diff; ``desc=1``) and
  paged (``page``, ``per``) in SQLite.
- ``/r/{n}/j/{id}``: one judgment.
- ``/r/{n}/disagreements``: per criterion, the largest disagreements and the confusion table.

Pages are built on the server with every run text escaped and have no script; the headers are
the labelling server's (a Content-Security-Policy allowing only the page's own stylesheet).
Requests whose ``Host`` is not this server's address are refused (a DNS-rebinding page cannot
read the run).
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from attune_judge.annotate._app import _HEADERS
from attune_judge.annotate._serve import _check_address, _timed_protocol, is_loopback
from attune_judge.annotate._view_index import Query
from attune_judge.annotate._view_pages import (
    ServerLinks,
    disagreements_section,
    judgment_section,
    landing_section,
    page,
    view_css,
)
from attune_judge.annotate._view_pages import table_section as _table_section
from attune_judge.annotate._view_runs import ViewedRun, open_runs

__all__ = ["make_view_app", "view"]

_CSS_LINK = '<link rel="stylesheet" href="/assets/view.css">'
_VIEW_HEADERS = {
    **_HEADERS,
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
}


class _Viewer:
    """The page handlers over ``runs``."""

    def __init__(self, runs: Sequence[ViewedRun], root: str, hosts: Sequence[str]) -> None:
        self.runs, self.root = runs, root
        self.allowed = {h.lower() for h in hosts}
        self.links = ServerLinks()

    def reply(self, title: str, body: str, nav: str = "", status: int = 200) -> Response:
        home = '<a href="/">all runs</a>'
        text = page(title, body, css=_CSS_LINK, nav=home + (" · " + nav if nav else ""))
        return HTMLResponse(text, status_code=status, headers=_VIEW_HEADERS)

    def refused(self, request: Request) -> Response | None:
        """421 for a ``Host`` that is not this server's (a DNS-rebinding page)."""
        host = request.headers.get("host", "").lower()
        name = host if host.endswith("]") else host.rsplit(":", 1)[0]
        if self.allowed and name.strip("[]") not in self.allowed:
            return Response("unknown Host", status_code=421, headers=_VIEW_HEADERS)
        return None

    def run_of(self, request: Request) -> tuple[int, ViewedRun] | None:
        try:
            n = int(request.path_params["n"])
        except ValueError:
            return None
        return (n, self.runs[n]) if 0 <= n < len(self.runs) else None

    def not_found(self, what: str) -> Response:
        return self.reply("Not found", f"<p>{html.escape(what)}</p>", status=404)

    def nav(self, n: int, run: ViewedRun, table: bool = True) -> str:
        out = f'<a href="{self.links.table(n)}">{html.escape(run.name)}: all judgments</a>'
        if not table:
            out = html.escape(run.name)
        if run.index.joined_criteria:
            out += f' · <a href="{self.links.disagreements(n)}">disagreements</a>'
        return out

    def handler(self, fn: Callable[[Request, int, ViewedRun], Response]) -> Endpoint:
        """``fn`` behind the Host check, given the run the path names."""

        def endpoint(request: Request) -> Response:
            if (refused := self.refused(request)) is not None:
                return refused
            found = self.run_of(request)
            if found is None:
                return self.not_found("no such run")
            return fn(request, *found)

        return endpoint

    def home(self, request: Request) -> Response:
        return self.refused(request) or self.reply(
            "attune-judge view", landing_section(self.runs, self.links, self.root)
        )

    def table(self, request: Request, n: int, run: ViewedRun) -> Response:
        q = Query.parse(dict(request.query_params))
        if q.criterion and q.criterion not in run.index.criteria:
            q.criterion = ""
        body = _table_section(n, run, q, run.index.rows(q), run.index.count(q), self.links)
        return self.reply(f"Judgments: {run.name}", body, self.nav(n, run, table=False))

    def judgment(self, request: Request, n: int, run: ViewedRun) -> Response:
        try:
            jid = int(request.path_params["jid"])
        except ValueError:
            return self.not_found("no such judgment")
        body = judgment_section(n, run, jid, self.links)
        if body is None:
            return self.not_found("no such judgment")
        return self.reply(f"Judgment #{jid}", body, self.nav(n, run))

    def disagreements(self, request: Request, n: int, run: ViewedRun) -> Response:
        body = disagreements_section(n, run, self.links)
        return self.reply(f"Judge and people: {run.name}", body, self.nav(n, run))


Endpoint = Callable[[Request], Response]


def make_view_app(runs: Sequence[ViewedRun], root: str, hosts: Sequence[str] = ()) -> Starlette:
    """The viewer over ``runs``; ``hosts``: the ``Host`` names accepted (any when empty)."""
    viewer = _Viewer(runs, root, hosts)
    css = view_css().encode()

    def asset(request: Request) -> Response:
        return Response(css, media_type="text/css; charset=utf-8", headers=_VIEW_HEADERS)

    def no_icon(request: Request) -> Response:
        return Response(status_code=204, headers=_VIEW_HEADERS)

    def run_root(request: Request) -> Response:
        return RedirectResponse(f"/r/{request.path_params['n']}/", headers=_VIEW_HEADERS)

    async def missing(request: Request, exc: Exception) -> Response:
        return viewer.not_found("not found")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return Response("read-only: GET only", status_code=405, headers=_VIEW_HEADERS)

    routes = [
        Route("/", viewer.home, methods=["GET"]),
        Route("/assets/view.css", asset, methods=["GET"]),
        Route("/favicon.ico", no_icon, methods=["GET"]),
        Route("/r/{n}", run_root, methods=["GET"]),
        Route("/r/{n}/", viewer.handler(viewer.table), methods=["GET"]),
        Route("/r/{n}/j/{jid}", viewer.handler(viewer.judgment), methods=["GET"]),
        Route("/r/{n}/disagreements", viewer.handler(viewer.disagreements), methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={404: missing, 405: not_allowed})


def view(
    run: Path,
    *,
    human: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8766,
) -> None:
    """Index the judgments under ``run`` and serve the viewer until interrupted."""
    import uvicorn

    _check_address(host, port)
    runs = open_runs(run, human)
    hosts = ["127.0.0.1", "localhost", "::1", host] if is_loopback(host) else []
    app = make_view_app(runs, str(run), hosts)
    shown = f"[{host}]" if ":" in host else host
    total = sum(r.index.totals()["_all"] for r in runs)
    print(f"attune-judge view: {len(runs)} run(s), {total} judgments under {run}")
    if not is_loopback(host):
        print(f"bound to {host}: anyone who can reach it reads the run (plain HTTP, no token)")
    print(f"  open http://{shown}:{port}/")
    sys.stdout.flush()
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        # as the labelling server: no connection cap for stalled sockets to fill, a deadline
        # on each request head
        http=_timed_protocol(),
        timeout_keep_alive=5,
    )
