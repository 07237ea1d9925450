"""The server's settings: the ``[serve]`` table of the config file.

    [serve]
    host = "127.0.0.1"              # loopback unless said otherwise
    port = 8090                     # Gravitino's port; 0: any free port (the log says which)
    tls_cert = "server.pem"         # both or neither: HTTPS when given
    tls_key = "server.key"
    authenticators = ["simple"]     # "simple" (Basic user:anything, no header = anonymous)
                                    # and/or "oauth" (bearer JWTs); leave "simple" out to refuse it
    jwt_key = { file = "jwt.pem" }  # the key that verifies tokens (a public key, or the HMAC
                                    # secret), never written in the file itself
    jwt_algorithm = "RS256"         # the one algorithm accepted
    jwt_audience = "pushdown"       # the "aud" every token must carry
    jwt_user_claim = "sub"          # the claim that names the user
    max_body = 1048576              # bytes; a larger request body is refused (400)
    header_timeout = 10             # seconds for a request's line and headers to arrive, from
                                    # the connection (or the previous answer); then it is closed
    body_timeout = 30               # seconds for the whole body to arrive; then 408
    keep_alive_timeout = 5          # seconds an idle kept-alive connection stays open
    max_connections = 256           # open connections at most; one more is closed at once

Every value is checked when the config is loaded; an error names the key and the value.
Paths are relative to the config file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushdown.errors import ConfigError

AUTHENTICATORS = ("simple", "oauth")
#: Algorithms a token may be signed with (one is configured; "none" never is).
ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "ES256",
    "ES384",
    "ES512",
    "PS256",
    "PS384",
    "PS512",
    "EdDSA",
    "HS256",
    "HS384",
    "HS512",
)
KNOWN = (
    "host",
    "port",
    "tls_cert",
    "tls_key",
    "authenticators",
    "jwt_key",
    "jwt_algorithm",
    "jwt_audience",
    "jwt_user_claim",
    "max_body",
    "header_timeout",
    "body_timeout",
    "keep_alive_timeout",
    "max_connections",
)
#: (lowest, highest) of each number setting: seconds, or a count of connections.
BOUNDS: dict[str, tuple[float, float]] = {
    "header_timeout": (0.1, 3600),
    "body_timeout": (0.1, 3600),
    "keep_alive_timeout": (0.1, 3600),
    "max_connections": (1, 100_000),
}


@dataclass(frozen=True)
class ServeSettings:
    host: str = "127.0.0.1"
    port: int = 8090
    tls_cert: str | None = None
    tls_key: str | None = None
    authenticators: tuple[str, ...] = ("simple",)
    #: a secret reference ``{ env = "VAR" }`` or ``{ file = "PATH" }``, resolved at start
    jwt_key: Mapping[str, str] | None = None
    jwt_algorithm: str = "RS256"
    jwt_audience: str | None = None
    jwt_user_claim: str = "sub"
    max_body: int = 1 << 20
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keep_alive_timeout: float = 5.0
    max_connections: int = 256

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


def _text(source: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value or any(not c.isprintable() for c in value):
        raise ConfigError(f"{source}: serve.{key} = {value!r}: must be a non-empty string")
    return value


def _path(source: str, key: str, value: Any, base: Path) -> str:
    return str(base / _text(source, key, value))


def _authenticators(source: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or any(v not in AUTHENTICATORS for v in value):
        raise ConfigError(
            f"{source}: serve.authenticators = {value!r}: a non-empty list of {', '.join(AUTHENTICATORS)}"
        )
    return tuple(dict.fromkeys(value))


def _number(source: str, key: str, value: Any, low: float, high: float) -> Any:
    whole = key == "max_connections"
    kinds = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
        what = "a whole number" if whole else "a number of seconds"
        raise ConfigError(f"{source}: serve.{key} = {value!r}: {what} from {low:g} to {high:g}")
    return value if whole else float(value)


def _key_ref(source: str, value: Any) -> Mapping[str, str]:
    if (
        not isinstance(value, Mapping)
        or len(value) != 1
        or set(value) - {"env", "file"}
        or not all(isinstance(v, str) and v for v in value.values())
    ):
        raise ConfigError(
            f'{source}: serve.jwt_key must be {{ env = "VAR" }} or {{ file = "PATH" }} (never the key itself)'
        )
    return dict(value)


def parse(raw: Any, source: str, base: Path) -> ServeSettings:
    """Check a ``[serve]`` table; raise :class:`ConfigError` naming the key and value."""
    if raw is None:
        return ServeSettings()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: [serve] must be a table (host, port, authenticators, ...)")
    unknown = sorted(set(raw) - set(KNOWN))
    if unknown:
        raise ConfigError(
            f"{source}: serve: unknown setting(s) {', '.join(unknown)}; known: {', '.join(KNOWN)}"
        )
    values: dict[str, Any] = {}
    for key in ("host", "jwt_audience", "jwt_user_claim"):
        if key in raw:
            values[key] = _text(source, key, raw[key])
    for key in ("tls_cert", "tls_key"):
        if key in raw:
            values[key] = _path(source, key, raw[key], base)
    if "port" in raw:
        p = raw["port"]
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 65535:
            raise ConfigError(f"{source}: serve.port = {p!r}: a whole number from 0 to 65535")
        values["port"] = p
    if "max_body" in raw:
        m = raw["max_body"]
        if isinstance(m, bool) or not isinstance(m, int) or not 1024 <= m <= 1 << 30:
            raise ConfigError(f"{source}: serve.max_body = {m!r}: a number of bytes from 1024 to 1 GiB")
        values["max_body"] = m
    for key, (low, high) in BOUNDS.items():
        if key in raw:
            values[key] = _number(source, key, raw[key], low, high)
    if "authenticators" in raw:
        values["authenticators"] = _authenticators(source, raw["authenticators"])
    if "jwt_key" in raw:
        ref = _key_ref(source, raw["jwt_key"])
        values["jwt_key"] = {k: str(base / v) if k == "file" else v for k, v in ref.items()}
    if "jwt_algorithm" in raw:
        if raw["jwt_algorithm"] not in ALGORITHMS:
            raise ConfigError(
                f"{source}: serve.jwt_algorithm = {raw['jwt_algorithm']!r}: one of {', '.join(ALGORITHMS)}"
            )
        values["jwt_algorithm"] = raw["jwt_algorithm"]
    settings = ServeSettings(**values)
    _check_together(settings, source)
    return settings


def _check_together(s: ServeSettings, source: str) -> None:
    if (s.tls_cert is None) != (s.tls_key is None):
        raise ConfigError(f"{source}: serve.tls_cert and serve.tls_key go together: give both or neither")
    if "oauth" in s.authenticators and (s.jwt_key is None or s.jwt_audience is None):
        raise ConfigError(
            f'{source}: serve.authenticators has "oauth": set serve.jwt_key and serve.jwt_audience '
            "(tokens are checked against both)"
        )
