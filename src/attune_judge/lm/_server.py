"""An OpenAI-compatible server named by ``--api-base``: its address, credentials apart.

A server URL may carry credentials: a user and password (``http://u:pw@host/v1``), a lone
token (``http://TOKEN@host/v1``, sent as HTTP Basic ``TOKEN:`` as curl and httpx do) or query
parameters (``http://host/v1?key=K``). :class:`ServerAddress` splits such a URL once into the
plain base (scheme, host, port, path: what logs, judge ids and cache keys may show, after
:func:`attune_judge._secrets.redact_url`) and the credentials, which travel only as an
``Authorization`` header and as the query of each request. Endpoint URLs are built with
:mod:`urllib.parse` (:meth:`ServerAddress.url`): a path is joined to the base's path and the
query is re-attached after it, never a path appended after a query.

:func:`server_engine` is the engine of every server URL: DSPy's own lm15 engine (the one a
plain ``http://host/v1`` gets from ``dspy.LM``), given to ``dspy.LM`` explicitly, and with
credentials in the URL a transport that adds them to each request. So every OpenAI-compatible
server takes the same native route, none goes through LiteLLM, and no call pays DSPy's engine
selection (``engine="auto"`` chooses a backend and plans the request again for every call:
about a tenth of a judgment's client CPU; benchmarks/README.md, issue 47).
"""

from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from attune_judge._secrets import redact_url
from attune_judge.errors import UserError
from attune_judge.lm._messages import EngineBase

__all__ = ["ServerAddress", "server_engine"]


@dataclass(frozen=True)
class ServerAddress:
    """A server URL split into its plain base and its credentials (never shown in a repr).

    >>> a = ServerAddress.parse("http://u:p%40ss@127.0.0.1:8000/v1/?key=K")
    >>> a.base, a.credentialed
    ('http://127.0.0.1:8000/v1', True)
    >>> a.url("/batches/b1/cancel", [("limit", "2")])
    'http://127.0.0.1:8000/v1/batches/b1/cancel?key=K&limit=2'
    >>> a.authorization == "Basic " + base64.b64encode(b"u:p@ss").decode()
    True
    >>> a
    ServerAddress(base='http://127.0.0.1:8000/v1')
    """

    base: str
    """``scheme://host[:port][/path]``: no user, password, query or fragment."""
    query: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """The URL's query parameters, sent with every request."""
    user: str | None = field(default=None, repr=False)
    """The URL's user (percent-decoded), ``None`` without one."""
    password: str | None = field(default=None, repr=False)
    """The URL's password (percent-decoded), ``None`` without one."""

    @classmethod
    def parse(cls, url: str) -> ServerAddress:
        """Split ``url``; a URL that is not ``http(s)://host...`` is a :class:`UserError`
        naming it (credentials redacted)."""
        shown = redact_url(url)
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError as exc:
            raise UserError(
                f"api_base {shown!r} is not a valid URL: {redact_url(str(exc))}"
            ) from None
        host = parts.hostname
        if parts.scheme not in ("http", "https") or not host:
            raise UserError(
                f"api_base {shown!r} is not an http(s) URL like http://127.0.0.1:8000/v1"
            )
        netloc = f"[{host}]" if ":" in host else host
        if port is not None:
            netloc += f":{port}"
        base = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        user = None if parts.username is None else unquote(parts.username)
        password = None if parts.password is None else unquote(parts.password)
        query = tuple(parse_qsl(parts.query, keep_blank_values=True))
        return cls(base=base, query=query, user=user, password=password)

    @property
    def credentialed(self) -> bool:
        """Whether the URL carries a user or query parameters."""
        return self.user is not None or bool(self.query)

    @property
    def authorization(self) -> str | None:
        """The ``Authorization`` header of the URL's user (HTTP Basic), ``None`` without one."""
        if self.user is None:
            return None
        token = f"{self.user}:{self.password or ''}".encode()
        return "Basic " + base64.b64encode(token).decode("ascii")

    def url(self, path: str = "", params: Any = ()) -> str:
        """The URL of ``path`` under the base (``/files`` → ``.../v1/files``), with the base's
        query and then ``params`` (pairs or a mapping) as its query."""
        parts = urlsplit(self.base)
        joined = parts.path.rstrip("/") + ("/" + path.lstrip("/") if path else "")
        extra = list(params.items()) if hasattr(params, "items") else list(params)
        return urlunsplit(
            (parts.scheme, parts.netloc, joined, urlencode([*self.query, *extra]), "")
        )

    def send_to(self, url: str) -> str:
        """``url`` (an endpoint under :attr:`base`) with the base's query parameters added."""
        if not self.query:
            return url
        parts = urlsplit(url)
        query = [*parse_qsl(parts.query, keep_blank_values=True), *self.query]
        return urlunsplit(parts._replace(query=urlencode(query)))


class _CredentialTransport:
    """An lm15 sync transport that sends each request with the server's credentials: its
    query parameters added to the URL and, for a user, the ``Authorization`` header."""

    def __init__(self, inner: Any, address: ServerAddress) -> None:
        self.inner = inner
        self.address = address

    def stream(self, request: Any) -> Any:
        headers = request.headers
        auth = self.address.authorization
        if auth is not None:
            headers = [(k, v) for k, v in headers if k.lower() != "authorization"]
            headers.append(("Authorization", auth))
        url = self.address.send_to(request.url)
        return self.inner.stream(dataclasses.replace(request, url=url, headers=headers))

    def copy(self) -> _CredentialTransport:
        return _CredentialTransport(self.inner.copy(), self.address)

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:  # max_connections, pool_stats, ...
        return getattr(self.inner, name)


class ServerEngine(EngineBase):
    """DSPy's lm15 chat engine for an OpenAI-compatible server (credentials in its URL sent by
    the transport)."""

    def __init__(self, model: str, address: ServerAddress, *, api_key: str | None, timeout: float):
        import importlib

        from dspy.clients.engines.lm15_engine import LM15Engine, timeouts_for
        from dspy.lm15 import RouterConfig

        # DSPy's vendored lm15 (not type-checked: mypy does not follow into dspy._vendor)
        transports = importlib.import_module("dspy._vendor.lm15.transports")
        StdlibTransport = transports.StdlibTransport

        self.model = model
        provider = LM15Engine(RouterConfig(env={}), model_type="chat").resolve(model).provider
        shape = RouterConfig(timeouts=timeouts_for(timeout))  # DSPy's timeouts, as for a plain URL
        # The proxy environment (HTTP_PROXY, NO_PROXY, ...) is read once, here, as lm15 reads
        # it for each request: a server no proxy applies to gets a transport that does not
        # read it again (urllib's scan of the whole environment was about 7 % of a judgment's
        # client CPU; issue 47). A change of those variables takes effect with the next judge.
        proxies = importlib.import_module("dspy._vendor.lm15.transports._proxy")
        target = importlib.import_module("dspy._vendor.lm15.transports._url").parse_url(
            address.base
        )
        direct = proxies.proxy_route_for(target, proxy=None, trust_env=True) is None
        transport = StdlibTransport(**shape.transport_kwargs(), trust_env=not direct)
        if address.credentialed:
            transport = _CredentialTransport(transport, address)
        config = RouterConfig(
            api_keys=None if api_key is None else {provider: api_key},
            base_urls={provider: address.base},
            transport=transport,
        )
        self.engine = LM15Engine(config, model_type="chat")

    def complete(self, request: Any) -> Any:
        """One request to the server (DSPy's engine contract)."""
        return self.engine.complete(request)

    def close(self) -> None:
        """Close the connections."""
        self.engine.close()


def server_engine(
    model: str, api_base: str, *, api_key: str | None, timeout: float
) -> tuple[ServerEngine, Any]:
    """The sync engine and its async twin for ``model`` at ``api_base`` (see the module
    docstring)."""
    from attune_judge.lm._messages import AsyncTwin

    engine = ServerEngine(model, ServerAddress.parse(api_base), api_key=api_key, timeout=timeout)
    return engine, AsyncTwin(engine)
