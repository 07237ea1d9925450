"""The model source's settings: the ``[source]`` table of the config file.

    [source]
    kind = "gravitino"                  # the only kind: an Apache Gravitino server's REST API
    uri = "http://gravitino:8090"
    metalake = "prod"
    user = "pushdown"                   # simple authentication as this user, or:
    token = { env = "GRAVITINO_TOKEN" } # a bearer token (OAuth / JWT), never written in the file
    interval = "1m"                     # how often the daemon reads it
    catalog_property = "pushdown.backend"  # opt-in: a catalog property that names the backend
    max_removal_share = 0.5             # a read that removes more of the model is held back
    min_guarded_removals = 10

    [source.catalogs]                   # Gravitino catalog -> the configured backend enforcing it
    sales = "mysql1"

A catalog is enforced by the backend ``[source.catalogs]`` names, else by a backend whose
own ``catalogs = [...]`` lists it, else (only when ``catalog_property`` is set: off by
default) by the one its ``catalog_property`` names; a catalog nothing names is reported
(``pushdown status``, the log), never silently left out. Binding a catalog to a backend is
administration: whoever may set a catalog's properties in the followed source (any holder
of CREATE_CATALOG there) binds it through ``catalog_property``, so it is the source
administrator's opt-in, and even then a backend whose configuration names its catalogs
enforces exactly those.
Every value is checked when the config is loaded; an error names the key and the value.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pushdown.app.settings.daemon import MAX_DURATION, duration
from pushdown.errors import ConfigError

KINDS = ("gravitino",)
KNOWN = (
    "kind",
    "uri",
    "metalake",
    "user",
    "token",
    "interval",
    "timeout",
    "catalogs",
    "catalog_property",
    "max_removal_share",
    "min_guarded_removals",
    "attempts",
)


@dataclass(frozen=True)
class SourceSettings:
    kind: str
    uri: str
    metalake: str
    user: str | None = None
    #: a secret reference ({ env = "VAR" } or { file = "PATH" }), resolved when the source is read
    token: Mapping[str, str] | None = None
    interval: float = 60.0
    #: seconds one call may take (the client's own default is 10)
    timeout: float = 30.0
    catalogs: Mapping[str, str] = field(default_factory=dict)
    #: off by default: a catalog property any creator sets there would bind enforcement here
    catalog_property: str | None = None
    max_removal_share: float = 0.5
    min_guarded_removals: int = 10
    #: reads in one poll before a source that keeps changing is given up until the next interval
    attempts: int = 3

    def describe(self) -> str:
        """The source as the messages name it (no credential)."""
        return f"{self.kind} metalake {self.metalake!r} at {self.uri}"


def _text(value: Any) -> bool:
    return (
        isinstance(value, str) and bool(value) and not any(unicodedata.category(ch) == "Cc" for ch in value)
    )


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def parse(raw: Any, source: str) -> SourceSettings | None:
    """Check a ``[source]`` table; raise :class:`ConfigError` naming the key and value."""
    if raw is None:
        return None
    where = f"{source}: source"
    if not isinstance(raw, Mapping):
        raise ConfigError(f'{where}: [source] must be a table (kind = "gravitino", uri, metalake, ...)')
    unknown = sorted(set(raw) - set(KNOWN))
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(KNOWN)}")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"{where}.kind = {_shown(kind)}: must be {', '.join(repr(k) for k in KINDS)}")
    uri = raw.get("uri")
    parts = urlsplit(str(uri)) if _text(uri) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f'{where}.uri = {_shown(uri)}: an http(s) address, e.g. "http://gravitino:8090"')
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError(f"{where}.uri: no credentials, query or fragment in the address")
    metalake = raw.get("metalake")
    if not _text(metalake):
        raise ConfigError(f"{where}.metalake = {_shown(metalake)}: the metalake's name")
    user = raw.get("user")
    if user is not None and not _text(user):
        raise ConfigError(f"{where}.user = {_shown(user)}: a user name")
    token = raw.get("token")
    if token is not None and (
        not isinstance(token, Mapping)
        or len(token) != 1
        or set(token) - {"env", "file"}
        or not all(_text(v) for v in token.values())
    ):
        raise ConfigError(
            f'{where}.token must not be written in the file: token = {{ env = "VAR" }} or {{ file = "PATH" }}'
        )
    if token is not None and user is not None:
        raise ConfigError(f"{where}: user (simple authentication) or token (a bearer token), not both")
    values: dict[str, Any] = {}
    for key in ("interval", "timeout"):
        if key in raw:
            seconds = duration(raw[key])
            if seconds is None or seconds > MAX_DURATION:
                raise ConfigError(
                    f'{where}.{key} = {_shown(raw[key])}: a duration such as "30s", "5m" (at most 7 days)'
                )
            values[key] = seconds
    catalogs = raw.get("catalogs", {})
    if not isinstance(catalogs, Mapping) or not all(_text(k) and _text(v) for k, v in catalogs.items()):
        raise ConfigError(f'{where}.catalogs: a table of catalog = "backend" names')
    prop = raw.get("catalog_property", SourceSettings.catalog_property)
    if prop is not None and not _text(prop):
        raise ConfigError(f"{where}.catalog_property = {_shown(prop)}: a property name")
    share = raw.get("max_removal_share", SourceSettings.max_removal_share)
    if isinstance(share, bool) or not isinstance(share, int | float) or not math.isfinite(share):
        raise ConfigError(f"{where}.max_removal_share = {_shown(share)}: a fraction from 0 to 1")
    if not 0 <= share <= 1:
        raise ConfigError(f"{where}.max_removal_share = {_shown(share)}: a fraction from 0 to 1")
    for key, least in (("min_guarded_removals", 0), ("attempts", 2)):
        if key in raw:
            n = raw[key]
            if isinstance(n, bool) or not isinstance(n, int) or n < least:
                raise ConfigError(f"{where}.{key} = {_shown(n)}: a whole number, at least {least}")
            values[key] = n
    return SourceSettings(
        kind=str(kind),
        uri=str(uri).rstrip("/"),
        metalake=str(metalake),
        user=None if user is None else str(user),
        token=None if token is None else {str(k): str(v) for k, v in token.items()},
        catalogs={str(k): str(v) for k, v in catalogs.items()},
        catalog_property=None if prop is None else str(prop),
        max_removal_share=float(share),
        **values,
    )


def check_backends(settings: SourceSettings, backends: Mapping[str, Any], source: str) -> None:
    """Every backend ``[source.catalogs]`` names is configured."""
    for catalog, backend in sorted(settings.catalogs.items()):
        if backend not in backends:
            known = ", ".join(sorted(backends)) or "none configured"
            raise ConfigError(
                f"{source}: source.catalogs.{catalog} = {backend!r}: no such backend; configured: {known}"
            )
