"""The JSON API through Starlette's test client: blind views, answers, and the safety rules.

The app is the one ``attune_judge.annotate.serve`` serves: ``uvicorn.run`` is replaced by a
function that hands the app to the test and waits until the test ends (``serve`` then closes
the store, as after Ctrl-C).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from attune_judge.annotate import LabelStore, prepare, serve
from tests.annotate._fixtures import make_items, make_pairs, make_rubric

testclient = pytest.importorskip("starlette.testclient")
TOKEN_HEADER = "X-Annotate-Token"  # the JSON API's token header (README, "annotate")
MAX_BODY = 64 * 1024  # the largest request body the server reads
CSP = (  # the page's policy: its own script, style and API only; no inline code, no framing
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
Client = tuple[Any, LabelStore, dict[str, str]]


@pytest.fixture
def serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., tuple[Any, LabelStore, dict[str, str], int]]]:
    """Start ``serve`` on new labels (two annotators, k = 2) in a thread: the test client of
    the app it serves, the store, the tokens and the port."""
    import uvicorn

    served: list[Any] = []
    ready, done = threading.Event(), threading.Event()

    def run(app: Any, **_: Any) -> None:
        served.append(app)
        ready.set()
        done.wait(60)

    monkeypatch.setattr(uvicorn, "run", run)
    threads: list[threading.Thread] = []

    def start(task: str = "ratings") -> tuple[Any, LabelStore, dict[str, str], int]:
        if task == "pairwise":
            items, rubric = make_pairs(tmp_path, 8), "attunebench-pairwise"
        else:
            items, rubric = make_items(tmp_path), str(make_rubric(tmp_path))
        store, tokens = prepare(
            tmp_path / "l.sqlite", items, task=task, rubric=rubric, k=2, annotators=["alice", "bob"]
        )
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        thread = threading.Thread(target=serve, args=(store, tokens), kwargs={"port": port})
        thread.start()
        threads.append(thread)
        assert ready.wait(60)
        client = testclient.TestClient(served[0], base_url=f"http://127.0.0.1:{port}")
        return client, store, tokens, port

    yield start
    done.set()
    for thread in threads:
        thread.join(60)


def _client(serving: Callable[..., Any], task: str = "ratings") -> Client:
    client, store, tokens, _ = serving(task)
    return client, store, tokens


def _h(token: str) -> dict[str, str]:
    return {TOKEN_HEADER: token}


def test_the_view_is_blind_and_a_label_is_stored(serving: Callable[..., Any]) -> None:
    client, store, tokens = _client(serving)
    got = client.get("/api/next", headers=_h(tokens["alice"]))
    assert got.status_code == 200
    view = got.json()["item"]
    assert set(view) == {"key", "task", "instructions", "context", "reply", "criteria"}
    assert "m1" not in got.text and "m2" not in got.text  # no model name, not even in the id
    assert "candidate_model" not in got.text and "c0:1" not in got.text
    assert [c["id"] for c in view["criteria"]] == ["warmth", "fit"]
    assert view["criteria"][0]["anchors"] == [[1, "Cold"], [5, "Very warm <b>anchor</b>"]]
    sent = client.post(
        "/api/label",
        headers=_h(tokens["alice"]),
        json={"key": view["key"], "answers": {"warmth": 4, "fit": 2}},
    )
    assert sent.status_code == 200, sent.text
    assert sent.json()["progress"]["labelled"] == 1
    rows = store.labels()
    assert [(r["annotator"], r["item_id"], r["answers"]) for r in rows] == [
        ("alice", "c0:1:m1", {"fit": 2, "warmth": 4})
    ]
    assert store.key_of("c0:1:m1") == view["key"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"answers": {"warmth": 4, "fit": 2}}, "field key: missing"),
        ({"key": "ITEM", "answers": {"warmth": 4}}, "field answers.fit: missing"),
        (
            {"key": "ITEM", "answers": {"warmth": 9, "fit": 2}},
            "answers.warmth: expected a whole number 1..5",
        ),
        ({"key": "ITEM", "answers": {"warmth": True, "fit": 2}}, "answers.warmth"),
        ({"key": "ITEM", "answers": {"warmth": 4, "fit": 2, "x": 1}}, "answers.x: not a criterion"),
        ({"key": "ITEM", "skip": True, "flag": "x"}, "exactly one of"),
        ({"key": "ITEM", "flag": ""}, "field flag"),
        ({"key": "ITEM", "answers": {"warmth": 4, "fit": 2}, "evil": 1}, "field evil: unknown"),
    ],
)
def test_a_malformed_submit_is_400_with_a_message_and_nothing_stored(
    serving: Callable[..., Any], body: dict[str, Any], message: str
) -> None:
    client, store, tokens = _client(serving)
    item = client.get("/api/next", headers=_h(tokens["alice"])).json()["item"]["key"]
    if body.get("key") == "ITEM":
        body = {**body, "key": item}
    got = client.post("/api/label", headers=_h(tokens["alice"]), json=body)
    assert got.status_code == 400
    assert message in got.json()["error"]
    assert store.labels(None) == []
    raw = client.post(
        "/api/label",
        headers={**_h(tokens["alice"]), "content-type": "application/json"},
        content=b"{not json",
    )
    assert raw.status_code == 400 and "not valid JSON" in raw.json()["error"]


def test_tokens_origin_type_and_size_are_enforced(serving: Callable[..., Any]) -> None:
    client, store, tokens, port = serving()
    assert client.get("/api/next").status_code == 403
    assert client.get("/api/next", headers=_h("forged")).status_code == 403
    item = client.get("/api/next", headers=_h(tokens["bob"])).json()["item"]["key"]
    good = {"key": item, "answers": {"warmth": 1, "fit": 1}}
    assert client.post("/api/label", json=good).status_code == 403
    cross = client.post(
        "/api/label", json=good, headers={**_h(tokens["bob"]), "Origin": "http://evil.example"}
    )
    assert cross.status_code == 403 and "cross-site" in cross.json()["error"]
    form = client.post("/api/label", headers=_h(tokens["bob"]), data={"key": item})
    assert form.status_code == 415
    big = client.post(
        "/api/label",
        headers={**_h(tokens["bob"]), "content-type": "application/json"},
        content=b'{"key": "' + b"x" * (MAX_BODY + 10) + b'"}',
    )
    assert big.status_code == 413
    assert store.labels(None) == []
    # another annotator's open item cannot be answered by bob
    client.post(
        "/api/label",
        headers=_h(tokens["alice"]),
        json={
            "key": client.get("/api/next", headers=_h(tokens["alice"])).json()["item"]["key"],
            "skip": True,
        },
    )
    other = client.get("/api/next", headers=_h(tokens["alice"])).json()["item"]["key"]
    assert other != item  # alice's open item is not bob's, so bob may not answer it
    wrong = client.post(
        "/api/label",
        headers=_h(tokens["bob"]),
        json={"key": other, "answers": {"warmth": 1, "fit": 1}},
    )
    assert wrong.status_code == 409
    store.undo("alice")
    ok = client.post(
        "/api/label", json=good, headers={**_h(tokens["bob"]), "Origin": f"http://127.0.0.1:{port}"}
    )
    assert ok.status_code == 200


def test_only_the_own_assets_are_served_with_a_strict_policy(serving: Callable[..., Any]) -> None:
    client, _, _ = _client(serving)
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-security-policy"] == CSP
    assert "unsafe-inline" not in CSP and page.headers["x-content-type-options"] == "nosniff"
    assert client.get("/assets/annotate.js").status_code == 200
    for path in (
        "/assets/../_store.py",
        "/assets/%2e%2e/_store.py",
        "/assets/_store.py",
        "/../../etc/passwd",
        "/assets/annotate.js/../../__init__.py",
    ):
        got = client.get(path)
        assert got.status_code == 404, path
        assert "LabelStore" not in got.text and "root:" not in got.text
    js = client.get("/assets/annotate.js").text
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js


def test_pair_order_is_drawn_per_annotator_and_mapped_back(
    serving: Callable[..., Any],
) -> None:
    client, store, tokens = _client(serving, "pairwise")
    shown: dict[tuple[str, str], list[str]] = {}
    for who in ("alice", "bob"):
        for _ in range(8):
            view = client.get("/api/next", headers=_h(tokens[who])).json()["item"]
            if view is None:
                break
            item_id = next(
                i.item_id for i in store.items() if store.key_of(i.item_id) == view["key"]
            )
            shown[(who, item_id)] = view["replies"]
            assert "m1" not in str(view) and "m2" not in str(view)
            got = client.post(
                "/api/label",
                headers=_h(tokens[who]),
                json={"key": view["key"], "answers": {"choice": "first"}},
            )
            assert got.status_code == 200
    rows = store.labels()
    assert len(rows) == 16
    for r in rows:  # the stored order is the one shown: B first exactly when swapped
        c = int(r["item_id"][1])
        in_order = [f"A text {c}", f"B text {c}"]
        assert shown[(r["annotator"], r["item_id"])] == (
            in_order[::-1] if r["swapped"] else in_order
        )
    # "first" is the item's B exactly when the order was swapped for that annotator
    assert all(r["answers"]["winner"] == ("B" if r["swapped"] else "A") for r in rows)
    # both orders occur (16 fair draws: all alike once in 2^15 runs)
    assert {r["swapped"] for r in rows} == {True, False}


def test_undo_and_progress(serving: Callable[..., Any]) -> None:
    client, store, tokens = _client(serving)
    h = _h(tokens["alice"])
    first = client.get("/api/next", headers=h).json()["item"]["key"]
    client.post("/api/label", headers=h, json={"key": first, "skip": True})
    second = client.get("/api/next", headers=h).json()["item"]["key"]
    client.post("/api/label", headers=h, json={"key": second, "flag": "reply is cut off"})
    assert client.get("/api/progress", headers=h).json()["flagged"] == 1
    undone = client.post("/api/undo", headers=h, json={})
    assert undone.json()["undone"] == second and undone.json()["item"]["key"] == second
    assert [r["action"] for r in store.labels(None)] == ["skip"]
    client.post("/api/undo", headers=h, json={})
    assert client.post("/api/undo", headers=h, json={}).status_code == 409
