"""The labelling server: a Starlette app over a :class:`LabelStore`.

JSON API (every call carries the annotator's token in the ``X-Annotate-Token`` header; the
page reads it from its own link ``/?token=...``):

- ``GET /api/next``: the next item to label, blind (``{"item": {...}, "progress": {...}}``,
  ``item`` is ``null`` when this annotator has nothing left).
- ``POST /api/label``: ``{"key", "answers"}`` stores a label; ``{"key", "skip": true}`` a
  skip; ``{"key", "flag": "comment"}`` a flag (``key``: the item's opaque key from
  ``/api/next``; item ids are not shown, as they may name the model). Answers are in the
  order shown: ratings ``{criterion: number}``, behaviours ``{item: "yes"|"no"}``, pairs
  ``{"choice": "first"|"second"|"tie"}``. Only the item this annotator has open may be
  answered.
- ``POST /api/undo``: removes this annotator's last answer; its item opens again.
- ``GET /api/progress``: this annotator's counts and the items' progress to k.
- ``GET /api/agreement``: α among annotators, and with a judge run the judge against them
  (``calibrate``'s report) (any valid token).

Safety: every answer is JSON with a token header (a cross-site form cannot send either) and a
matching ``Origin`` when the browser sends one; bodies over 64 KiB are refused (413); a bad
token gets 403, a malformed submit 400 with a message and nothing stored (deep nesting, an
integer of thousands of digits and a key given twice included). A loopback server answers only
a ``Host`` naming its own address (``make_app(hosts=...)``). Pages are fixed
assets with a strict Content-Security-Policy; the page writes data with ``textContent`` only.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from attune_judge.annotate._answers import BadAnswerError, check_answers
from attune_judge.annotate._items import Task, blind_view, swapped
from attune_judge.annotate._store import LabelStore
from attune_judge.rubrics import Rubric

__all__ = ["CSP", "MAX_BODY", "TOKEN_HEADER", "make_app"]

MAX_BODY = 64 * 1024
TOKEN_HEADER = "X-Annotate-Token"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/agreement": ("agreement.html", "text/html; charset=utf-8"),
    "/assets/annotate.js": ("annotate.js", "text/javascript; charset=utf-8"),
    "/assets/agreement.js": ("agreement.js", "text/javascript; charset=utf-8"),
    "/assets/annotate.css": ("annotate.css", "text/css; charset=utf-8"),
}
"""The only files served: a fixed table, never a path taken from the request."""
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}

Agreement = Callable[[], dict[str, Any]]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=_HEADERS)


def _ok(data: dict[str, Any]) -> JSONResponse:
    return JSONResponse(data, headers=_HEADERS)


class _TooLargeError(Exception):
    """The request body is over :data:`MAX_BODY`."""


Handler = Callable[[Request, str], Awaitable[Response]]


async def _read_json(request: Request) -> Any:
    """The request's JSON body, at most :data:`MAX_BODY` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise _TooLargeError
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise _TooLargeError
    try:
        return json.loads(body, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise BadAnswerError("body: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, an integer of 4,300+ digits
        message = str(exc).splitlines()[0][:200]
        raise BadAnswerError(f"body: not valid JSON ({message})") from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key given twice (else the last would silently win)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key[:50]!r} given twice")
        out[key] = value
    return out


def _host_check(app: Any, hosts: Collection[str]) -> Any:
    """``app`` answering 400 to a request whose ``Host`` header is not one of ``hosts``."""
    allowed = {h.lower() for h in hosts}

    async def checked(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if host.lower() not in allowed:
                response = _error(400, f"Host {host[:100]!r} is not served here")
                await response(scope, receive, send)
                return
        await app(scope, receive, send)

    return checked


def _refused(request: Request, post: bool) -> JSONResponse | None:
    """Why a submit is refused: a cross-site origin (403) or not JSON (415)."""
    if not post:
        return None
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host", ""):
        return _error(403, f"cross-site request from {origin} refused")
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        return _error(415, "send JSON (Content-Type: application/json)")
    return None


class _Api:
    """The endpoints over one store."""

    def __init__(
        self, store: LabelStore, task: Task, rubric: Rubric, agreement: Agreement | None
    ) -> None:
        self.store, self.task, self.rubric, self.agreement = store, task, rubric, agreement
        self.seed = store.meta()["seed"]

    def guarded(self, fn: Handler, post: bool) -> Callable[[Request], Awaitable[Response]]:
        """``fn`` behind the token check (and, for submits, the origin and type checks)."""

        async def endpoint(request: Request) -> Response:
            token = request.headers.get(TOKEN_HEADER, "")
            name = self.store.annotator_for(token) if token else None
            if name is None:
                return _error(403, f"missing or unknown token (header {TOKEN_HEADER})")
            return _refused(request, post) or await fn(request, name)

        return endpoint

    def next_view(self, name: str) -> dict[str, Any]:
        item_id = self.store.next_item(name)
        item = self.store.item(item_id) if item_id else None
        view = None
        if item is not None:
            flip = swapped(self.seed, name, item.item_id)
            view = blind_view(item, self.store.key_of(item.item_id), self.task, self.rubric, flip)
        return {"item": view, "progress": self.store.progress(name)}

    async def next(self, request: Request, name: str) -> Response:
        return _ok(self.next_view(name))

    async def progress(self, request: Request, name: str) -> Response:
        return _ok(self.store.progress(name))

    async def agreement_data(self, request: Request, name: str) -> Response:
        if self.agreement is None:
            return _ok({"dimensions": [], "judge": None, "notes": []})
        return _ok(await run_in_threadpool(self.agreement))

    def _store(self, name: str, item_id: str, body: dict[str, Any]) -> bool:
        """Check and store one answer (:class:`BadAnswerError` when malformed)."""
        item = self.store.item(item_id)
        assert item is not None
        flip = swapped(self.seed, name, item_id)
        actions = [k for k in ("answers", "skip", "flag") if k in body]
        if len(actions) != 1:
            raise BadAnswerError("send exactly one of answers, skip or flag")
        if actions[0] == "skip":
            if body["skip"] is not True:
                raise BadAnswerError("field skip: expected true")
            return self.store.record(name, item_id, "skip", swapped=flip)
        if actions[0] == "flag":
            comment = body["flag"]
            if not isinstance(comment, str) or not comment.strip() or len(comment) > 2000:
                raise BadAnswerError("field flag: expected a comment of 1 to 2000 characters")
            return self.store.record(name, item_id, "flag", swapped=flip, comment=comment)
        answers = check_answers(self.task, self.rubric, item, body["answers"], flip)
        return self.store.record(name, item_id, "label", answers, swapped=flip)

    async def label(self, request: Request, name: str) -> Response:
        try:
            body = await _read_json(request)
            if not isinstance(body, dict) or not isinstance(body.get("key"), str):
                raise BadAnswerError("field key: missing (expected the key of the item shown)")
            unknown = sorted(set(body) - {"key", "answers", "skip", "flag"})
            if unknown:
                raise BadAnswerError(f"field {unknown[0]}: unknown")
            item_id = self.store.item_for_key(body["key"])
            if item_id is None or self.store.next_item(name) != item_id:
                return _error(409, f"item {body['key']!r} is not the item open for {name}")
            stored = self._store(name, item_id, body)
        except _TooLargeError:
            return _error(413, f"request body over {MAX_BODY} bytes")
        except BadAnswerError as exc:
            return _error(400, str(exc))
        if not stored:
            return _error(409, f"item {body['key']!r} already answered by {name}")
        return _ok({"stored": body["key"], **self.next_view(name)})

    async def undo(self, request: Request, name: str) -> Response:
        undone = self.store.undo(name)
        if undone is None:
            return _error(409, "nothing to undo")
        return _ok({"undone": self.store.key_of(undone), **self.next_view(name)})


def make_app(
    store: LabelStore,
    task: Task,
    rubric: Rubric,
    agreement: Agreement | None = None,
    *,
    hosts: Collection[str] | None = None,
) -> Any:
    """The ASGI app serving the page and the JSON API over ``store``; with ``hosts``, only
    requests whose ``Host`` header is one of them (``host:port``) are answered (400)."""
    api = _Api(store, task, rubric, agreement)
    files = resources.files("attune_judge.annotate").joinpath("assets")
    assets = {
        route: (files.joinpath(name).read_bytes(), media)
        for route, (name, media) in _ASSETS.items()
    }

    def asset(request: Request) -> Response:
        body, media = assets[request.url.path]
        return Response(body, media_type=media, headers=_HEADERS)

    def no_icon(request: Request) -> Response:
        return Response(status_code=204, headers=_HEADERS)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(404, "not found")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return _error(405, "method not allowed")

    routes = [Route(path, asset, methods=["GET"]) for path in _ASSETS]
    routes += [
        Route("/favicon.ico", no_icon, methods=["GET"]),
        Route("/api/next", api.guarded(api.next, False), methods=["GET"]),
        Route("/api/progress", api.guarded(api.progress, False), methods=["GET"]),
        Route("/api/agreement", api.guarded(api.agreement_data, False), methods=["GET"]),
        Route("/api/label", api.guarded(api.label, True), methods=["POST"]),
        Route("/api/undo", api.guarded(api.undo, True), methods=["POST"]),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})
    return app if hosts is None else _host_check(app, hosts)
