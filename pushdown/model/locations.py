"""Storage locations as one comparable value, so "inside" and "overlaps" mean one thing
whatever form a location is written in. Pure.

A location is what a fileset (or any object) stands for on storage. It arrives as
``/a/b``, ``hdfs://nn:8020/a/b``, ``hdfs:/a/b``, ``hdfs:///a/b``, ``webhdfs://h/a``,
``viewfs://c/a``, ``s3a://bucket/a``, with trailing slashes, ``.`` segments or
percent-escapes. :func:`parse` makes it a :class:`Location`: a *store* and the path's
segments. Plain paths and ``hdfs`` URIs share one store, ``hdfs``, whatever the
authority (Ranger's HDFS ``path`` resource names no namenode, so two namenodes' ``/a``
are one resource there); every other scheme is its own store with its authority
(case-folded). A location that cannot be compared safely is refused (``None``): a ``..``
segment (before or after decoding), an empty or relative path, control characters, a
query, fragment, wildcard or Ranger token (``* ? # { }`` and a backslash), a path that decodes to a
different segmentation.

:func:`inside` is exact (HDFS paths are case-sensitive); :func:`overlaps` is
deliberately wider: two locations overlap when one encloses the other *ignoring case*,
so a case variant of a protected path is never a way around a refusal.
"""

from __future__ import annotations

import functools
import json
import unicodedata
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

HDFS = "hdfs"
#: wildcards and tokens of Ranger's path resource, a query or fragment: never compared
WILD = frozenset("*?#{}\\")
#: property keys (compared case-folded) that name a fileset's location: ``location``,
#: ``storageLocation``, ``pushdown.rest.storageLocations``, ``path`` ...
LOCATION_WORDS = ("location", "path")


@dataclass(frozen=True, order=True)
class Location:
    store: str
    parts: tuple[str, ...]

    def __str__(self) -> str:
        path = "/" + "/".join(self.parts)
        return path if self.store == HDFS else f"{self.store}{path}"


@functools.lru_cache(maxsize=1 << 16)
def parse(text: str) -> Location | None:
    """``text`` as a :class:`Location`, or ``None`` when it cannot be compared safely
    (cached: a registration compares its location with every other fileset's)."""
    if not isinstance(text, str) or any(unicodedata.category(c) in ("Cc", "Cf") for c in text):
        return None
    text = text.strip()
    store = HDFS
    if ":" in text.split("/", 1)[0]:  # a scheme
        scheme, rest = text.split(":", 1)
        scheme = scheme.lower()
        if not scheme or "?" in rest or "#" in rest:
            return None
        if rest.startswith("//"):
            authority, _, path = rest[2:].partition("/")
            rest = "/" + path
        else:
            authority = ""
        if scheme != HDFS:
            store = f"{scheme}://{authority.lower()}"
        text = rest
    if not text.startswith("/"):
        return None
    return _segments(store, text)


def _segments(store: str, path: str) -> Location | None:
    raw = [p for p in path.split("/") if p not in ("", ".")]
    parts = [urllib.parse.unquote(p) for p in raw]
    bad = any(p in ("..", ".") or "/" in p or not p.isprintable() or set(p) & WILD for p in parts)
    if bad or ".." in raw:
        return None
    return Location(store, tuple(parts))


@functools.lru_cache(maxsize=1 << 16)
def folded(text: str) -> tuple[str, tuple[str, ...]] | None:
    """:func:`parse`, its store and segments case-folded (what :func:`overlaps` compares)."""
    loc = parse(text)
    return None if loc is None else (loc.store.casefold(), tuple(p.casefold() for p in loc.parts))


def inside(loc: Location, root: Location) -> bool:
    """``loc`` is ``root`` or lies below it (exact, case-sensitive)."""
    return loc.store == root.store and loc.parts[: len(root.parts)] == root.parts


def overlaps(a: Location, b: Location) -> bool:
    """One of ``a``, ``b`` encloses the other, ignoring case (a wider test than HDFS's)."""
    if a.store.casefold() != b.store.casefold():
        return False
    x, y = (tuple(p.casefold() for p in loc.parts) for loc in (a, b))
    n = min(len(x), len(y))
    return x[:n] == y[:n]


@functools.lru_cache(maxsize=1 << 10)
def is_location_key(key: str) -> bool:
    folded = key.casefold()
    if folded.endswith("name"):  # a location's name (``locationName``, ``default-location-name``)
        return False
    return any(word in folded for word in LOCATION_WORDS)


@functools.lru_cache(maxsize=1 << 16)
def values_of(text: str) -> tuple[str, ...]:
    """The locations one property value holds: a JSON list of strings, else the text."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except ValueError:
            return (text,)
        if isinstance(value, list):
            return tuple(v if isinstance(v, str) else json.dumps(v) for v in value)
    if stripped.startswith("{"):
        try:
            mapped = json.loads(stripped)
        except ValueError:
            return (text,)
        if isinstance(mapped, dict):
            return tuple(v if isinstance(v, str) else json.dumps(v) for v in mapped.values())
    return (text,)


def locations_of(properties: Mapping[str, str]) -> list[str]:
    """Every location-like value among ``properties`` (keys compared case-folded)."""
    return [v for k, text in properties.items() if is_location_key(k) for v in values_of(str(text))]
