"""The labelling server: a Starlette app over a :class:`LabelStore`.

JSON API (every call carries the annotator's token in the ``X-Annotate-Token`` header; the
page reads it from its own link ``/?token=...``):

- ``GET /api/next``: the next item to label, blind (``{"item": {...}, "progress": {...}}``,
  ``item`` is ``null`` when this annotator has nothing left).
- ``POST /api/label``: ``{"key", "answers"}`` stores a label; ``{"key", "skip": true}`` a
  skip; ``{"key", "flag": "comment"}`` a flag (``key``: the item's opaque key from
  ``/api/next``; item ids are not shown, as they may name the model). Answers are in the order shown: ratings
  ``{criterion: number}``, behaviours ``{item: "yes"|"no"}``, pairs ``{"choice":
  "first"|"second"|"tie"}``. Only the item this annotator has open may be answered.
- ``POST /api/undo``: removes this annotator's last answer; its item opens again.
- ``GET /api/progress``: this annotator's counts and the items' progress to k.
- ``GET /api/agreement``: α among annotators, and with a judge run the judge against them
  (``calibrate``'s report) (any valid token).

Safety: every answer is JSON with a token header (a cross-site form cannot send either) and a
matching ``Origin`` when the browser sends one; bodies over 64 KiB are refused (413); a bad
token gets 403, a malformed submit 400 with a message and nothing stored. Pages are fixed
assets with a strict Content-Security-Policy; the page writes data with ``textContent`` only.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from attune_judge.annotate._answers import BadAnswer, check_answers
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


def make_app(
    store: LabelStore, task: Task, rubric: Rubric, agreement: Agreement | None = None
) -> Starlette:
    """The ASGI app serving the page and the JSON API over ``store``."""
    seed = store.meta()["seed"]
    assets = {
        route: (resources.files("attune_judge.annotate").joinpath("assets", name).read_bytes(),
                media)
        for route, (name, media) in _ASSETS.items()
    }

    def asset(request: Request) -> Response:
        body, media = assets[request.url.path]
        return Response(body, media_type=media, headers=_HEADERS)

    def annotator(request: Request) -> str | None:
        token = request.headers.get(TOKEN_HEADER, "")
        return store.annotator_for(token) if token else None

    def guarded(
        fn: Callable[[Request, str], Awaitable[Response]], post: bool
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            name = annotator(request)
            if name is None:
                return _error(403, f"missing or unknown token (header {TOKEN_HEADER})")
            if post:
                origin = request.headers.get("origin")
                host = request.headers.get("host", "")
                if origin is not None and origin.split("://", 1)[-1] != host:
                    return _error(403, f"cross-site request from {origin} refused")
                if request.headers.get("content-type", "").split(";")[0] != "application/json":
                    return _error(415, "send JSON (Content-Type: application/json)")
            return await fn(request, name)

        return endpoint

    async def read_json(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
            raise _TooLarge
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                raise _TooLarge
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadAnswer(f"body: not valid JSON ({exc})") from None

    def next_view(name: str) -> dict[str, Any]:
        item_id = store.next_item(name)
        item = store.item(item_id) if item_id else None
        view = None
        if item is not None:
            flip = swapped(seed, name, item.item_id)
            view = blind_view(item, store.key_of(item.item_id), task, rubric, flip)
        return {"item": view, "progress": store.progress(name)}

    async def api_next(request: Request, name: str) -> Response:
        return _ok(next_view(name))

    async def api_progress(request: Request, name: str) -> Response:
        return _ok(store.progress(name))

    async def api_label(request: Request, name: str) -> Response:
        try:
            body = await read_json(request)
            if not isinstance(body, dict) or not isinstance(body.get("key"), str):
                raise BadAnswer("field key: missing (expected the key of the item shown)")
            unknown = sorted(set(body) - {"key", "answers", "skip", "flag"})
            if unknown:
                raise BadAnswer(f"field {unknown[0]}: unknown")
            item_id = store.item_for_key(body["key"])
            if item_id is None or store.next_item(name) != item_id:
                return _error(409, f"item {body['key']!r} is not the item open for {name}")
            item = store.item(item_id)
            assert item is not None
            flip = swapped(seed, name, item_id)
            actions = [k for k in ("answers", "skip", "flag") if k in body]
            if len(actions) != 1:
                raise BadAnswer("send exactly one of answers, skip or flag")
            if actions[0] == "skip":
                if body["skip"] is not True:
                    raise BadAnswer("field skip: expected true")
                stored = store.record(name, item_id, "skip", swapped=flip)
            elif actions[0] == "flag":
                comment = body["flag"]
                if not isinstance(comment, str) or not comment.strip() or len(comment) > 2000:
                    raise BadAnswer("field flag: expected a comment of 1 to 2000 characters")
                stored = store.record(name, item_id, "flag", swapped=flip, comment=comment)
            else:
                answers = check_answers(task, rubric, item, body["answers"], flip)
                stored = store.record(name, item_id, "label", answers, swapped=flip)
        except _TooLarge:
            return _error(413, f"request body over {MAX_BODY} bytes")
        except BadAnswer as exc:
            return _error(400, str(exc))
        if not stored:
            return _error(409, f"item {body['key']!r} already answered by {name}")
        return _ok({"stored": body["key"], **next_view(name)})

    async def api_undo(request: Request, name: str) -> Response:
        undone = store.undo(name)
        if undone is None:
            return _error(409, "nothing to undo")
        return _ok({"undone": store.key_of(undone), **next_view(name)})

    async def api_agreement(request: Request, name: str) -> Response:
        if agreement is None:
            return _ok({"dimensions": [], "judge": None, "notes": []})
        return _ok(await run_in_threadpool(agreement))

    def no_icon(request: Request) -> Response:
        return Response(status_code=204, headers=_HEADERS)

    routes = [Route(path, asset, methods=["GET"]) for path in _ASSETS]
    routes.append(Route("/favicon.ico", no_icon, methods=["GET"]))
    routes += [
        Route("/api/next", guarded(api_next, False), methods=["GET"]),
        Route("/api/progress", guarded(api_progress, False), methods=["GET"]),
        Route("/api/agreement", guarded(api_agreement, False), methods=["GET"]),
        Route("/api/label", guarded(api_label, True), methods=["POST"]),
        Route("/api/undo", guarded(api_undo, True), methods=["POST"]),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(404, "not found")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return _error(405, "method not allowed")

    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})


class _TooLarge(Exception):
    """The request body is over :data:`MAX_BODY`."""
