"""The stand-in's state and its authorization rules (the open server's expressions)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

ADMIN = "admin"
PRIVILEGES = frozenset(
    {
        "CREATE CATALOG", "USE CATALOG", "CREATE SCHEMA", "USE SCHEMA", "CREATE TABLE", "SELECT", "MODIFY",
        "CREATE FUNCTION", "EXECUTE", "CREATE VOLUME", "READ VOLUME", "CREATE MODEL",
        "CREATE EXTERNAL LOCATION", "READ FILES", "WRITE FILES", "CREATE EXTERNAL TABLE",
        "CREATE EXTERNAL VOLUME", "CREATE MANAGED STORAGE", "CREATE STORAGE CREDENTIAL",
    }
)  # fmt: skip
KINDS = {"metastore": 0, "catalog": 1, "schema": 2, "table": 3}
#: functions, volumes and registered models: keyed (catalog, schema, name, kind), beside the tables
LEAVES = ("function", "volume", "registered_model")
#: external locations and credentials: keyed (STORAGE + kind, name), under the metastore
STORAGES = ("external_location", "credential")
STORAGE = "\x00"
METASTORE_ID = "11111111-2222-3333-4444-555555555555"


class Problem(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def chain(key: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The securable and its ancestors, catalog first (a catalog is no child of the
    metastore: the metastore's grants reach nothing below it)."""
    if not key:
        return [()]
    if len(key) == 4:  # a function, volume or model: its schema and catalog above it
        return [key[:1], key[:2], key]
    return [key[:n] for n in range(1, len(key) + 1)]


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name or any(c in name for c in "./ ") or not name.isprintable():
        raise Problem(400, "INVALID_ARGUMENT", f"invalid name: {name!r}")
    return name.lower()


Key = tuple[str, ...]


@dataclass
class Store:
    users: set[str] = field(default_factory=lambda: {ADMIN})
    #: catalogs, schemas, tables by their name parts -> owner
    objects: dict[Key, str] = field(default_factory=dict)
    #: (name parts) -> principal -> privileges; () is the metastore
    grants: dict[Key, dict[str, set[str]]] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    # -- the rules ------------------------------------------------------------------

    def owner(self, who: str, key: Key) -> bool:
        return who == ADMIN if key == () else self.objects.get(key) == who

    def has(self, who: str, key: Key, privilege: str) -> bool:
        """``privilege`` on ``key`` or on an ancestor (inheritance downward)."""
        return any(privilege in self.grants.get(k, {}).get(who, set()) for k in chain(key))

    def can_see_catalog(self, who: str, c: Key) -> bool:
        return self.owner(who, ()) or self.owner(who, c) or self.has(who, c, "USE CATALOG")

    def can_see_schema(self, who: str, s: Key) -> bool:
        c = s[:1]
        return (
            self.owner(who, ())
            or self.owner(who, c)
            or ((self.owner(who, s) or self.has(who, s, "USE SCHEMA")) and self.has(who, c, "USE CATALOG"))
        )

    def can_see_table(self, who: str, t: Key) -> bool:
        c, s = t[:1], t[:2]
        return (
            self.owner(who, ())
            or self.owner(who, c)
            or (self.owner(who, s) and self.has(who, c, "USE CATALOG"))
            or (
                self.has(who, s, "USE SCHEMA")
                and self.has(who, c, "USE CATALOG")
                and (self.owner(who, t) or self.has(who, t, "SELECT") or self.has(who, t, "MODIFY"))
            )
        )

    def can_create_schema(self, who: str, c: Key) -> bool:
        return (
            self.owner(who, ())
            or self.owner(who, c)
            or (self.has(who, c, "USE CATALOG") and self.has(who, c, "CREATE SCHEMA"))
        )

    def can_create_table(self, who: str, s: Key) -> bool:
        c = s[:1]
        return (self.owner(who, ()) or self.owner(who, c) or self.has(who, c, "USE CATALOG")) and (
            self.owner(who, ())
            or self.owner(who, s)
            or (self.has(who, s, "USE SCHEMA") and self.has(who, s, "CREATE TABLE"))
        )

    def can_drop_table(self, who: str, t: Key) -> bool:
        c, s = t[:1], t[:2]
        return (
            self.owner(who, ())
            or self.owner(who, c)
            or (self.owner(who, s) and self.has(who, c, "USE CATALOG"))
            or (self.has(who, s, "USE SCHEMA") and self.has(who, c, "USE CATALOG") and self.owner(who, t))
        )

    def can_update(self, who: str, kind: str, key: Key) -> bool:
        """Whether ``who`` may ``PATCH`` the grants of ``key`` (``PermissionService``'s
        expressions): the admin; a catalog's owner below it; a schema's owner (with USE
        CATALOG) on it and its tables, functions and volumes; their own owner with USE
        CATALOG and USE SCHEMA; a registered model, external location or credential only
        its own owner."""
        if self.owner(who, ()):
            return True
        if kind in ("metastore", "registered_model") or kind in STORAGES:
            return bool(key) and self.owner(who, key)
        c = key[:1]
        if self.owner(who, c):
            return True
        if kind == "catalog":
            return False
        use_catalog = self.has(who, c, "USE CATALOG")
        if kind == "schema":
            return use_catalog and self.owner(who, key)
        s = key[:2]
        return use_catalog and (
            self.owner(who, s) or (self.has(who, s, "USE SCHEMA") and self.owner(who, key))
        )

    def owns_above(self, who: str, key: Key) -> bool:
        """The admin, or an owner of the securable, its parent or grandparent."""
        return self.owner(who, ()) or any(self.owner(who, k) for k in chain(key) if k)

    # -- changes --------------------------------------------------------------------

    def create(self, key: Key, owner: str) -> None:
        if key in self.objects:
            raise Problem(409, "ALREADY_EXISTS", f"{'.'.join(key)} already exists")
        parent = key[:2] if len(key) == 4 else key[:-1]
        if len(key) > 1 and parent not in self.objects:
            raise Problem(404, "NOT_FOUND", f"{'.'.join(parent)} not found")
        self.objects[key] = owner

    def drop(self, key: Key) -> None:
        for k in [k for k in self.objects if k == key or (len(key) < 3 and k[: len(key)] == key)]:
            del self.objects[k]
            self.grants.pop(k, None)

    def find(self, kind: str, full: str) -> Key:
        if kind == "metastore":
            return ()  # the open server ignores the name: there is one metastore
        key = tuple(p.lower() for p in full.split("."))
        if kind in STORAGES:
            key = (STORAGE + kind, full)
        elif kind in LEAVES and len(key) == 3:
            key = (*key, kind)
        elif KINDS.get(kind) != len(key):
            raise Problem(404, "NOT_FOUND", f"{kind} {full} not found")
        if key not in self.objects:
            raise Problem(404, "NOT_FOUND", f"{kind} {full} not found")
        return key
