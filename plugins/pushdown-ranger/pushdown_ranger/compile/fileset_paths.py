"""Fileset locations as HDFS policy paths, and nested locations. Pure.

Every fileset policy is recursive: ``path=/lake/raw`` also matches ``/lake/raw/pii`` and
everything below it. :func:`nest` makes an inner location's own decision win there (see
:mod:`pushdown_ranger.compile.leaves`).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping

from pushdown.model.securables import ObjectRef
from pushdown_ranger.compile.naming import Items, exact
from pushdown_ranger.facts import Resource

Users = dict[str, set[str]]
Names = Mapping[str, list[ObjectRef]]


#: schemes whose paths are the HDFS namespace Ranger's HDFS plugin sees (``webhdfs`` and
#: ``swebhdfs`` are HDFS over HTTP: the authority is the namenode's HTTP address)
HDFS_SCHEMES = frozenset({"hdfs", "webhdfs", "swebhdfs"})
#: schemes whose paths may be any HDFS path (a ``viewfs`` mount table maps them, and pushdown
#: does not read it): a fileset there may lie under any HDFS path
UNKNOWN_SCHEMES = frozenset({"viewfs"})
#: the HDFS path of a location pushdown cannot place: it may lie anywhere (``/`` holds it)
ANYWHERE = "/"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(.*)$", re.DOTALL)


def split_location(location: str) -> tuple[str, str]:
    """(scheme in lower case, or ``""``; the path part: without the authority, the query
    and the fragment). ``hdfs:/a`` (no authority), ``hdfs:///a``, ``hdfs://nn:8020/a`` and
    ``/a`` are all the path ``/a`` of scheme ``hdfs`` (or none)."""
    text = location.strip()
    found = _SCHEME.match(text)
    if found is None:
        return "", text
    scheme, rest = found.group(1).lower(), found.group(2)
    if rest.startswith("//"):
        rest = rest[2:]
        rest = rest[rest.find("/") :] if "/" in rest else ""
    return scheme, rest.split("?", 1)[0].split("#", 1)[0]


def literal_path(location: str) -> str:
    """The HDFS path of a location whatever Ranger can name (``""``: not on HDFS), for
    what may enclose a location :func:`path_of` refuses; :data:`ANYWHERE` for a location
    on HDFS at a path pushdown cannot know (``viewfs://``, a relative path)."""
    scheme, text = split_location(location)
    if scheme in UNKNOWN_SCHEMES:
        return ANYWHERE
    if (scheme and scheme not in HDFS_SCHEMES) or not text.strip():
        return ""
    if scheme:
        text = urllib.parse.unquote(text)
    parts: list[str] = []
    for part in text.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    # a relative path resolves against a working directory pushdown does not know
    return "/" + "/".join(parts) if text.startswith("/") else ANYWHERE


def withhold(held: dict[str, Users], unnamed: dict[str, Users], names: Names) -> list[str]:
    """A location Ranger cannot name gets no policy, but a recursive allow of a location
    enclosing it would reach it: there each access goes only to the users it allows too."""
    notes: list[str] = []
    for inner, allowed in unnamed.items():
        for path, by_access in held.items():
            if inner == ANYWHERE or path == "/" or inner == path or inner.startswith(path + "/"):
                for access, who in by_access.items():
                    cut = who - allowed.get(access, set())
                    if cut:
                        who -= cut
                        what = (
                            f"it cannot be named in Ranger, so {access} goes only to the users allowed both"
                        )
                        notes.append(_note(names, path, inner, what))
    return notes


def path_of(location: str) -> str:
    """The path of an HDFS location (``hdfs://nn:8020/a/b``, ``hdfs:/a/b``,
    ``webhdfs://nn:9870/a/b`` -> ``/a/b``; a URI's path is percent-decoded: ``a%20b`` is
    ``a b``), ``.`` and ``..`` segments resolved as HDFS resolves them, or ``""`` when it is
    not one Ranger can name exactly (wildcards, tokens, a ``..`` above the root, a
    ``viewfs://`` path the mount table maps) or not on HDFS at all (``s3a://bucket/a`` is
    no HDFS path ``/a``)."""
    scheme, text = split_location(location)
    if scheme and scheme not in HDFS_SCHEMES:
        return ""
    if scheme:
        text = urllib.parse.unquote(text)
    if not text.startswith("/") or not exact(text):
        return ""
    parts: list[str] = []
    for part in text.split("/"):
        if part == "..":
            if not parts:
                return ""
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/" + "/".join(parts)


def resource(path: str) -> tuple[Resource, ...]:
    return (("path", (path,), True),)


def enclosing(path: str, held: dict[str, Users]) -> list[str]:
    """The held paths strictly above ``path``, outermost first."""
    parts = path.split("/")[1:] if path != "/" else []
    above = ["/"] + ["/" + "/".join(parts[:i]) for i in range(1, len(parts))] if parts else []
    return [a for a in above if a in held and a != path]


def nest(
    items: Items,
    held: dict[str, Users],
    names: Names,
    service: str,
    deny: bool,
    barred: Mapping[str, Users] | None = None,
) -> list[str]:
    """The items of every held path, nested locations included; the notes where narrower.
    ``barred``: per path, the users a DENY of the model bars (deny items where enabled)."""
    outer = {p: enclosing(p, held) for p in held}
    if not deny:
        return _without_deny(items, held, outer, names, service)
    return _with_deny(items, held, outer, names, service, barred or {})


def _with_deny(
    items: Items,
    held: dict[str, Users],
    outer: dict[str, list[str]],
    names: Names,
    service: str,
    barred: Mapping[str, Users],
) -> list[str]:
    """Each path allows its own users and denies whoever an enclosing path allows more,
    and whoever a DENY bars."""
    denied: dict[str, Users] = {}
    for path, above in outer.items():
        denied[path] = {}
        for access, who in held[path].items():
            wider = set().union(*(held[a][access] for a in above)) - who
            wider |= barred.get(path, {}).get(access, set()) - who
            denied[path][access] = wider
            if who:
                items.add(False, service, resource(path), access, who)
            if wider:
                items.add(True, service, resource(path), access, wider)
    notes: list[str] = []
    for path, above in outer.items():
        for a in above:
            for access, who in held[path].items():
                if who & denied[a][access]:
                    notes.append(_note(names, a, path, f"its deny items for {access} also reach it"))
    return notes


def _without_deny(
    items: Items, held: dict[str, Users], outer: dict[str, list[str]], names: Names, service: str
) -> list[str]:
    """An enclosing path allows only the users its every enclosed path allows too."""
    notes: list[str] = []
    allow = {p: {a: set(u) for a, u in users.items()} for p, users in held.items()}
    for path, above in outer.items():
        for a in above:
            for access, who in allow[a].items():
                cut = who - held[path][access]
                if cut:
                    who -= cut
                    what = f"without deny items, its recursive {access} goes only to the users allowed both"
                    notes.append(_note(names, a, path, what))
    for path, by_access in allow.items():
        for access, who in by_access.items():
            if who:
                items.add(False, service, resource(path), access, who)
    return notes


def _note(names: Names, outer: str, inner: str, what: str) -> str:
    def listed(p: str) -> str:
        return ", ".join(sorted(str(o) for o in names.get(p, []))) or p

    return f"fileset location {outer} ({listed(outer)}) holds {inner} ({listed(inner)}): {what} (narrower)"
