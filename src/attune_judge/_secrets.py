"""Secrets that must never reach a file, a report, a progress line or an error message.

Two kinds:

* **credential values** — the values of environment variables whose name looks like a
  credential (``OPENAI_API_KEY``, ``HF_TOKEN``, ...) and the credentials found in a server URL
  given as ``--api-base`` / ``ATTUNE_API_BASE`` (:func:`register_url`). Each is replaced by
  ``***`` wherever it appears (a model echoing a key, an SDK quoting it in an error). Values
  shorter than 8 characters are not replaced as plain text (``FOO_KEY=1`` must not redact
  every ``1``), but see below.
* **credentials inside any URL** — the password of ``scheme://user:password@host`` (the user
  name is kept: ``http://u:***@127.0.0.1:9``), a lone ``scheme://token@host`` user, and the
  value of a query parameter whose name looks like a credential (``key``, ``api_key``,
  ``token``, ``access_token``, ``secret``, ``password``, ``sig`` ...), whatever their length.

:func:`redact` applies both; every writer of a run directory, the CLI's error and warning
lines and the commands' printed output go through it.
"""

from __future__ import annotations

import base64
import os
import re
import threading
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

__all__ = [
    "MIN_SECRET_LEN",
    "redact",
    "redact_url",
    "register_url",
    "secret_values",
    "url_secrets",
]

MIN_SECRET_LEN = 8
"""Shortest credential value replaced as plain text."""

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_URL_VARIABLES = ("ATTUNE_API_BASE", "OPENAI_API_BASE", "OPENAI_BASE_URL")
"""Variables holding a server URL, whose credentials are secrets too."""

# userinfo of a URL: `scheme://` then everything up to the first `@` that is not a path,
# query or fragment character; no quote, backslash or space (safe inside JSON text)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^\s/?#@'\"<>\\]+)@")
_CRED_PARAM = (
    r"(?:[A-Za-z0-9_.-]*[_.-])?(?:api[_-]?key|access[_-]?key|key|token|secret|password|passwd"
    r"|pwd|auth|authorization|credentials?|signature|sig)"
)
_QUERY = re.compile(
    r"(?P<pre>[?&;](?P<name>" + _CRED_PARAM + r")=)(?P<value>[^&;#\s'\"<>\\]+)",
    re.IGNORECASE,
)

_registered: set[str] = set()
_lock = threading.Lock()
_memo: tuple[dict[bytes, bytes], frozenset[str], list[str]] | None = None
"""The process environment's raw items, the registered secrets and the values found in them:
:func:`secret_values` is called for every request a run sends (the request cache redacts each
answer), and decoding the whole environment each time cost about 0.4 ms per judgment."""


def _split_userinfo(info: str) -> tuple[str, str | None]:
    user, sep, password = info.partition(":")
    return (user, password) if sep else (user, None)


def redact_url(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``.

    >>> redact_url("cannot reach http://u:pw@127.0.0.1:9/v1?key=abc&x=1")
    'cannot reach http://u:***@127.0.0.1:9/v1?key=***&x=1'
    >>> redact_url("https://ghp_token@host/v1")
    'https://***@host/v1'
    """

    def info(m: re.Match[str]) -> str:
        user, password = _split_userinfo(m.group("info"))
        kept = f"{user}:***" if password is not None else "***"
        return f"{m.group('scheme')}{kept}@"

    if "://" in text:
        text = _USERINFO.sub(info, text)
    if "=" in text:
        text = _QUERY.sub(lambda m: f"{m.group('pre')}***", text)
    return text


def url_secrets(url: str) -> list[str]:
    """The credential values inside ``url`` (password, lone user, credential parameters),
    also percent-decoded and as the HTTP Basic token a client sends for them."""
    out: set[str] = set()
    for m in _USERINFO.finditer(url):
        user, password = _split_userinfo(m.group("info"))
        values = [password] if password is not None else [user]
        out.update(v for v in values if v)
        basic = f"{unquote(user)}:{unquote(password or '')}"
        out.add(base64.b64encode(basic.encode()).decode("ascii"))
    for m in _QUERY.finditer(url):
        out.add(m.group("value"))
    out |= {unquote(v) for v in out}
    return sorted(v for v in out if v)


def register_url(url: str | None) -> str | None:
    """Remember the credentials inside a server URL as secrets (see :func:`secret_values`);
    returns ``url`` unchanged (usable as an option callback)."""
    if url:
        found = url_secrets(url)
        if found:
            with _lock:
                _registered.update(found)
    return url


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Credential values to redact, longest first: environment variables whose name looks like
    a credential (``*_API_KEY`` ...), the credentials in server-URL variables
    (``ATTUNE_API_BASE``) and those registered by :func:`register_url` (the latter only for the
    process's own environment, ``environ=None``).

    Only values of at least :data:`MIN_SECRET_LEN` characters count, so that ``FOO_KEY=1``
    does not redact every ``1`` in a run directory (URL credentials of any length are still
    redacted inside URLs by :func:`redact`).
    """
    global _memo
    if environ is not None:
        return _found(environ, set())
    raw = getattr(os.environ, "_data", None)  # CPython's undecoded items: compared, not decoded
    with _lock:
        registered = frozenset(_registered)
        memo = _memo
    if memo is not None and raw is not None and memo[1] == registered and memo[0] == raw:
        return list(memo[2])
    found = _found(os.environ, set(registered))
    if isinstance(raw, dict):
        with _lock:
            _memo = (dict(raw), registered, found)
    return list(found)


def _found(env: Mapping[str, str], vals: set[str]) -> list[str]:
    vals |= {v for k, v in env.items() if _SECRET_NAME.search(k)}
    for var in _URL_VARIABLES:
        if env.get(var):
            vals.update(url_secrets(env[var]))
    return sorted((v for v in vals if len(v) >= MIN_SECRET_LEN), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with URL credentials and every secret value replaced by ``***``.

    ``secrets`` defaults to :func:`secret_values` of this process.
    """
    text = redact_url(text)
    for s in secret_values() if secrets is None else secrets:
        if s in text:
            text = text.replace(s, "***")
    return text
