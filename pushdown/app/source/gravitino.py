"""Read a Gravitino metalake through the official ``apache-gravitino`` client.

One read is a :class:`Snapshot`: users with their roles, groups with theirs, roles with
their securable objects (privilege and condition each), the catalogs (type, the property
that names a backend), the schema/table/fileset tree below the relational and fileset
catalogs, and the owners of the metalake, the roles, the catalogs, schemas, tables and
filesets. Snapshots compare with ``==``: a read is used only when it is consistent (see
:mod:`pushdown.app.source.follow`).

What goes wrong is a :class:`SourceUnreadable` whose ``kind`` says what: ``unreachable``
(connection refused, reset, cut off, timed out), ``unauthorized`` (401), ``forbidden``
(403), ``server error`` (5xx), ``changed during the read`` (a role, user, catalog or
schema listed by one call and gone by the next, or named by a user but not listed),
``bad answer`` (not what the API says), ``no such metalake``. Nothing of a failed read is used.

Longer than ~250 lines: the one module that speaks the Gravitino client, with the read,
the snapshot and the classification of its errors together.
"""

from __future__ import annotations

import base64
import http.client
import json
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pushdown.app.settings.source import SourceSettings
from pushdown.errors import ConfigError, PushdownError

T = TypeVar("T")
#: (securable type, full name)
Key = tuple[str, str]
#: (securable type, full name, privilege, condition)
GrantRow = tuple[str, str, str, str]

UNREACHABLE = "unreachable"
UNAUTHORIZED = "unauthorized"
FORBIDDEN = "forbidden"
SERVER_ERROR = "server error"
CHANGED = "changed during the read"
NO_METALAKE = "no such metalake"
BAD_ANSWER = "bad answer"


class SourceUnreadable(PushdownError):
    """The source could not be read consistently; nothing of this read is used."""

    delay: float | None = 5.0

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(f"{kind}: {message}")


@dataclass(frozen=True)
class Snapshot:
    """One read of a metalake (comparable with ``==``)."""

    metalake: str
    users: dict[str, frozenset[str]] = field(default_factory=dict)
    groups: dict[str, frozenset[str]] = field(default_factory=dict)
    roles: dict[str, frozenset[GrantRow]] = field(default_factory=dict)
    #: catalog -> (type, the value of the backend-naming property, or None)
    catalogs: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    #: schemas, tables and filesets (by their name segments)
    tree: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    #: (type, name segments) -> (owner, owner type "USER" | "GROUP")
    owners: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = field(default_factory=dict)
    #: what this read could not list (e.g. a messaging catalog's topics)
    unlisted: tuple[str, ...] = ()

    @property
    def size(self) -> dict[str, int]:
        return {
            "users": len(self.users),
            "groups": len(self.groups),
            "roles": len(self.roles),
            "securable_objects": sum(len(g) for g in self.roles.values()),
            "catalogs": len(self.catalogs),
            "objects": len(self.tree),
            "owners": len(self.owners),
        }


def resolve_token(ref: Mapping[str, str]) -> str:
    """The token a secret reference points to; errors say where it comes from, never what it is."""
    import os

    if "env" in ref:
        value = os.environ.get(ref["env"])
        if value is None:
            raise ConfigError(f"source: environment variable {ref['env']} (for token) is not set")
        return value
    try:
        return Path(ref["file"]).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"source: cannot read token file {ref['file']}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"source: token file {ref['file']} is not UTF-8 text") from None


def _provider(settings: SourceSettings) -> Any:
    """The client's auth provider: Basic for ``user``, Bearer for ``token``, none otherwise."""
    from gravitino.auth.auth_data_provider import AuthDataProvider

    if settings.token is not None:
        header = b"Bearer " + resolve_token(settings.token).encode()
    elif settings.user is not None:
        header = b"Basic " + base64.b64encode(f"{settings.user}:dummy".encode())
    else:
        return None

    class _Header(AuthDataProvider):  # type: ignore[misc]
        def has_token_data(self) -> bool:
            return True

        def get_token_data(self) -> bytes:
            return header

        def close(self) -> None:
            return None

        def __repr__(self) -> str:  # never shows the credential
            return "<auth header>"

    return _Header()


def classify(exc: BaseException) -> SourceUnreadable:
    """A client error as a :class:`SourceUnreadable` (never with a credential in it)."""
    from gravitino.exceptions.base import (
        ForbiddenException,
        NoSuchMetalakeException,
        NotFoundException,
        RESTException,
        UnauthorizedException,
    )

    if isinstance(exc, SourceUnreadable):
        return exc
    if isinstance(exc, ForbiddenException):
        return SourceUnreadable(FORBIDDEN, f"the source refused the read (403): {exc}")
    if isinstance(exc, UnauthorizedException) or "401" in str(exc) or "Unauthorized" in str(exc):
        return SourceUnreadable(UNAUTHORIZED, f"the source did not accept the credentials (401): {exc}")
    if isinstance(exc, NoSuchMetalakeException):
        return SourceUnreadable(NO_METALAKE, f"the source has no such metalake: {exc}")
    if isinstance(exc, NotFoundException):
        return SourceUnreadable(CHANGED, f"something listed was gone when read: {exc}")
    if isinstance(exc, OSError | http.client.HTTPException):
        return SourceUnreadable(UNREACHABLE, f"{type(exc).__name__}: {exc}")
    if isinstance(exc, json.JSONDecodeError | KeyError | TypeError | ValueError | AttributeError):
        return SourceUnreadable(BAD_ANSWER, f"{type(exc).__name__}: {exc}")
    if isinstance(exc, RESTException) and "Unable to process" in str(exc):
        # an error code the 1.3.1 client does not know: on a read that is Gravitino's 401
        # (code 1011; the client keeps neither the code nor the HTTP status)
        return SourceUnreadable(
            UNAUTHORIZED, f"the source refused the credentials (an error the client does not know): {exc}"
        )
    if isinstance(exc, RuntimeError):  # the client's 500 (code 1002) and its other errors
        return SourceUnreadable(SERVER_ERROR, f"{type(exc).__name__}: {exc}")
    return SourceUnreadable(BAD_ANSWER, f"unexpected {type(exc).__name__}: {exc}")


class GravitinoReader:
    """Reads one metalake; ``calls`` counts the HTTP requests made (one per client call)."""

    def __init__(self, settings: SourceSettings) -> None:
        self.settings = settings
        self.calls = 0
        self._client: Any = None

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: S110 - closing a client that may be gone already
                pass

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        self.calls += 1
        return fn(*args)

    def client(self) -> Any:
        if self._client is None:
            try:
                from gravitino import GravitinoClient
                from gravitino.client.gravitino_client_config import GravitinoClientConfig
            except ImportError:
                raise ConfigError(
                    "source: the official Gravitino client is not installed "
                    "(pip install 'pushdown[gravitino]')"
                ) from None
            timeout = max(int(self.settings.timeout), 1)  # whole seconds
            self.calls += 2  # the client's version check and its metalake lookup
            self._client = GravitinoClient(
                self.settings.uri,
                self.settings.metalake,
                auth_data_provider=_provider(self.settings),
                client_config={GravitinoClientConfig.CLIENT_REQUEST_TIMEOUT: timeout},
            )
        return self._client

    def read(self) -> Snapshot:
        """Read the whole metalake once (raises :class:`SourceUnreadable`)."""
        try:
            with warnings.catch_warnings():  # the client's decoder warns of every null it defaults
                warnings.filterwarnings("ignore", category=RuntimeWarning, module="dataclasses_json")
                return self._read()
        except ConfigError:
            raise
        except Exception as exc:
            self.close()  # the next read starts with a new client
            raise classify(exc) from None

    def _read(self) -> Snapshot:
        from gravitino.api.metadata_object import MetadataObject
        from gravitino.api.metadata_objects import MetadataObjects
        from gravitino.namespace import Namespace

        c = self.client()
        metalake = self.settings.metalake
        users = {u.name(): frozenset(u.roles() or ()) for u in self._call(c.list_users)}
        groups = {g.name(): frozenset(g.roles() or ()) for g in self._call(c.list_groups)}
        roles: dict[str, frozenset[GrantRow]] = {}
        for name in self._call(c.list_role_names):
            role = self._call(c.get_role, name)
            rows = set()
            for obj in role.securable_objects() or ():
                for p in obj.privileges() or ():
                    rows.add((obj.type().value, obj.full_name(), p.name().name, p.condition().name))
            roles[name] = frozenset(rows)
        held = set().union(*users.values(), *groups.values()) if users or groups else set()
        missing = sorted(held - set(roles))
        if missing:
            raise SourceUnreadable(CHANGED, f"role(s) held but not listed: {', '.join(missing[:5])}")

        prop = self.settings.catalog_property
        catalogs: dict[str, tuple[str, str | None]] = {}
        tree: set[tuple[str, tuple[str, ...]]] = set()
        unlisted: list[str] = []
        listed = []
        for cat in self._call(c.list_catalogs_info):
            kind = cat.type().name.lower()
            props = cat.properties() or {}
            catalogs[cat.name()] = (kind, props.get(prop) if prop else None)
            listed.append((cat, kind))
        for cat, kind in listed:
            if kind not in ("relational", "fileset"):
                unlisted.append(f"catalog {cat.name()}: the objects of a {kind} catalog are not read")
                continue
            for schema in self._call(cat.as_schemas().list_schemas):
                tree.add(("schema", (cat.name(), schema)))
                ns = Namespace.of(schema)
                if kind == "relational":
                    leaves = self._call(cat.as_table_catalog().list_tables, ns)
                    leaf = "table"
                else:
                    leaves = self._call(cat.as_fileset_catalog().list_filesets, ns)
                    leaf = "fileset"
                for ident in leaves:
                    tree.add((leaf, (cat.name(), schema, ident.name())))

        owners: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = {}
        T = MetadataObject.Type
        types = {"schema": T.SCHEMA, "table": T.TABLE, "fileset": T.FILESET}
        wanted: list[tuple[str, tuple[str, ...], Any]] = [("metalake", (), T.METALAKE)]
        wanted += [("role", (r,), T.ROLE) for r in sorted(roles)]
        wanted += [("catalog", (name,), T.CATALOG) for name in sorted(catalogs)]
        wanted += [(kind, names, types[kind]) for kind, names in sorted(tree)]
        for kind, names, type_ in wanted:
            full = [metalake] if kind == "metalake" else list(names)
            owner = self._call(c.get_owner, MetadataObjects.of(full, type_))
            if owner is not None:
                owners[(kind, names)] = (owner.name(), owner.type().name)
        return Snapshot(
            metalake,
            users,
            groups,
            roles,
            catalogs,
            frozenset(tree),
            owners,
            tuple(unlisted),
        )
