"""A small client of the OpenAI batch API (files + batches), as OpenAI-compatible servers offer.

Six calls: upload a JSONL of requests (``POST /files``, ``purpose=batch``), create a batch
(``POST /batches``), read its status (``GET /batches/{id}``), list batches (``GET /batches``, to
find one made from a given input file), download a result file (``GET /files/{id}/content``)
and cancel (``POST /batches/{id}/cancel``). Transient failures
(connection errors, timeouts, HTTP 429 and 5xx) are retried with backoff; anything else is a
:class:`BatchApiError` naming the server and the status. The key is read from the environment
by the caller and sent only in the ``Authorization`` header.
"""

from __future__ import annotations

import json
import time
from typing import Any

from attune_judge._secrets import redact_url
from attune_judge.errors import UserError
from attune_judge.lm import ServerAddress

__all__ = ["BatchApiError", "OpenAIBatchClient"]

_TRANSIENT = {408, 409, 429, 500, 502, 503, 504}


class BatchApiError(UserError):
    """The batch API refused a call or could not be reached (after retries)."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
        """A failure that may pass (timeout, connection, HTTP 408/409/429/5xx)."""


class OpenAIBatchClient:
    """Files and batches of an OpenAI-compatible API at ``base_url`` (``.../v1``).

    Parameters
    ----------
    base_url
        The API base, e.g. ``https://api.openai.com/v1`` or ``http://host:8000/v1``.
    api_key
        Sent as ``Authorization: Bearer ...`` (``None``: no header, for local servers).
    timeout_s
        Per HTTP call.
    retries
        Attempts after the first for transient failures (backoff 1, 2, 4, ... s, capped 30).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 120.0,
        retries: int = 4,
        backoff_s: float = 1.0,
    ) -> None:
        import httpx

        # the credentials of the URL (user:password, a query key) travel as a header and the
        # query of each request, the endpoint joined to the path before it (lm/_server.py)
        self._address = ServerAddress.parse(base_url)
        self.base_url = redact_url(self._address.url())
        """The base as errors show it: credentials redacted."""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if self._address.authorization is not None:  # a user in the URL wins, as with httpx
            headers["Authorization"] = self._address.authorization
        self._http = httpx.Client(headers=headers, timeout=timeout_s)
        self.retries = retries
        self.backoff_s = backoff_s

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def __enter__(self) -> OpenAIBatchClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the five calls --------------------------------------------------------------------

    def upload(self, jsonl: bytes, filename: str = "attune-batch.jsonl") -> str:
        """Upload a batch input file; its id."""
        response = self._call(
            "POST",
            "/files",
            data={"purpose": "batch"},
            files={"file": (filename, jsonl, "application/jsonl")},
        )
        file_id = response.get("id")
        if not isinstance(file_id, str):
            raise BatchApiError(f"{self.base_url}/files: the upload returned no file id")
        return file_id

    def create(
        self,
        input_file_id: str,
        endpoint: str,
        *,
        completion_window: str = "24h",
        metadata: dict[str, str] | None = None,
        retries: int | None = None,
    ) -> dict[str, Any]:
        """Create a batch over an uploaded file; the batch object.

        ``retries`` overrides the client's: a creation that timed out may have created the
        batch, so :func:`~attune_judge.runner._batch_state.create_batch_once` calls this with
        ``retries=0`` and looks the batch up before it tries again.
        """
        body: dict[str, Any] = {
            "input_file_id": input_file_id,
            "endpoint": endpoint,
            "completion_window": completion_window,
        }
        if metadata:
            body["metadata"] = metadata
        batch = self._call("POST", "/batches", json=body, retries=retries)
        if not isinstance(batch.get("id"), str):
            raise BatchApiError(f"{self.base_url}/batches: the new batch has no id")
        return batch

    def status(self, batch_id: str) -> dict[str, Any]:
        """The batch object (``status``, ``output_file_id``, ``error_file_id``, ...)."""
        return self._call("GET", f"/batches/{batch_id}")

    def find_batch(self, input_file_id: str, intent: str, *, since: float = 0.0) -> str | None:
        """The id of a batch made from ``input_file_id`` (or tagged ``attune_intent=intent``).

        Pages through ``GET /batches`` (newest first) until batches older than ``since`` (a
        day of clock skew allowed) or the end of the list.
        """
        after: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 100}
            if after:
                params["after"] = after
            page = self._call("GET", "/batches", params=params)
            data = page.get("data") if isinstance(page, dict) else None
            if not isinstance(data, list):
                raise BatchApiError(f"{self.base_url}/batches: the batch list has no data")
            for batch in data:
                metadata = batch.get("metadata") or {}
                if batch.get("input_file_id") == input_file_id or (
                    isinstance(metadata, dict) and metadata.get("attune_intent") == intent
                ):
                    return str(batch["id"])
            created = [b.get("created_at") for b in data if isinstance(b.get("created_at"), int)]
            too_old = since and created and min(created) < since - 86_400
            if not data or not page.get("has_more") or too_old:
                return None
            after = str(data[-1]["id"])

    def cancel(self, batch_id: str) -> dict[str, Any]:
        """Ask the provider to cancel a batch."""
        return self._call("POST", f"/batches/{batch_id}/cancel")

    def download(self, file_id: str) -> list[dict[str, Any]]:
        """The lines of a result file (output or error file), parsed."""
        text = self._call("GET", f"/files/{file_id}/content", raw=True)
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    # -- plumbing ----------------------------------------------------------------------------

    def backoff(self, attempt: int) -> None:
        """Sleep before retry ``attempt + 1`` (1, 2, 4, ... s, capped 30)."""
        time.sleep(min(30.0, self.backoff_s * 2**attempt))

    def _call(
        self,
        method: str,
        path: str,
        *,
        raw: bool = False,
        retries: int | None = None,
        **kwargs: Any,
    ) -> Any:
        import httpx

        params = kwargs.pop("params", None) or {}
        url = self._address.url(path, params)
        shown = redact_url(url)
        retries = self.retries if retries is None else retries
        attempt = 0
        while True:
            problem: str
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.HTTPError as exc:
                problem = redact_url(f"{type(exc).__name__}: {exc}")
            else:
                if response.status_code < 400:
                    return response.text if raw else response.json()
                problem = f"HTTP {response.status_code}: {_message(response)}"
                if response.status_code not in _TRANSIENT:
                    raise BatchApiError(f"batch API {method} {shown} failed: {problem}")
            if attempt >= retries:
                raise BatchApiError(
                    f"batch API {method} {shown} failed after {attempt + 1} attempts: {problem}",
                    transient=True,
                )
            self.backoff(attempt)
            attempt += 1


def _message(response: Any) -> str:
    try:
        error = response.json().get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
    except ValueError:
        pass
    return str(response.text)[:300]
