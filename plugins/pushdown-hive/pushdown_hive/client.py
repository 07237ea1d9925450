"""A typed, thin client of the Hive Metastore's Thrift API (privileges, roles, inventory).

Built on the generated binding that ``pymetastore`` ships (``pymetastore.hive_metastore``,
from a newer ``hive_metastore.thrift`` than 2.3's: Thrift skips the fields a server does
not know, and the tests run every call here against Hive 2.3; Hive 4 where Docker runs).
Only this module touches the binding; the backend (``pushdown_hive.backend``, through
``pushdown_hive.calls``) works with the frozen values defined here.

    with MetastoreClient.connect("thrift://127.0.0.1:9083", timeout=10) as hms:
        hms.grant_privileges([Grant(HiveObject.of_table("sales", "orders"), "alice", USER, "SELECT",
                                    grantor="pushdown")])           # one call, many privileges
        hms.list_privileges(HiveObject.of_table("sales", "orders"))  # every principal's, one call

What the server does (Hive 2.3, checked by the tests in ``tests/test_hive_client.py``):

- ``list_privileges(None, None, obj)`` lists the grants of ALL principals (users, groups,
  roles) on one database or table in one call; ``list_privileges(name, type, obj)``
  only that principal's; an object of type ``None`` with a principal lists everything
  that principal holds anywhere.
- ``grant_privileges`` / ``revoke_privileges`` take a ``PrivilegeBag``: any number of
  privileges, on any objects and principals, in one call (all or nothing on the server).
- A grant the server already holds, a revoke of one it does not hold, and a role that
  exists already all fail with an opaque "Internal error processing ..." (a
  ``TApplicationException``): diff first, never send those.
- ``get_privilege_set(obj, user, groups)`` answers with the user's, the named groups' and
  the user's roles' privileges on that one object (not inherited from the database).

Errors: a transport failure (refused, reset, timed out) raises :class:`HiveUnavailable`
(temporary: the connection is dropped and the next call reconnects); an answer the
server refuses raises :class:`HiveRefused` (permanent, with the server's words), or its
subclasses :class:`HiveNotFound` and :class:`HiveAlreadyExists`. Both are pushdown
``BackendError`` subclasses, so the core retries the first and reports the second.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from pymetastore.hive_metastore import ThriftHiveMetastore as _hms
from pymetastore.hive_metastore import ttypes as _tt
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TException
from thrift.transport import TSocket, TTransport

from pushdown.errors import PermanentBackendError, TemporaryBackendError


class HiveUnavailable(TemporaryBackendError):
    """The metastore cannot be reached or did not answer in time; retrying may succeed."""


class HiveRefused(PermanentBackendError):
    """The metastore refused the call; the message carries its words."""


class HiveNotFound(HiveRefused):
    """NoSuchObjectException: the database, table or role does not exist."""


class HiveAlreadyExists(HiveRefused):
    """AlreadyExistsException: the database or table exists already."""


class ObjectType(IntEnum):
    GLOBAL = 1
    DATABASE = 2
    TABLE = 3
    PARTITION = 4
    COLUMN = 5


class PrincipalType(IntEnum):
    USER = 1
    ROLE = 2
    GROUP = 3


USER, ROLE, GROUP = PrincipalType.USER, PrincipalType.ROLE, PrincipalType.GROUP


@dataclass(frozen=True, order=True)
class HiveObject:
    """A securable of the metastore: the server (GLOBAL), a database, a table."""

    type: ObjectType
    db: str | None = None
    table: str | None = None
    column: str | None = None

    @classmethod
    def server(cls) -> HiveObject:
        return cls(ObjectType.GLOBAL)

    @classmethod
    def database(cls, db: str) -> HiveObject:
        return cls(ObjectType.DATABASE, db)

    @classmethod
    def of_table(cls, db: str, table: str) -> HiveObject:
        return cls(ObjectType.TABLE, db, table)

    def to_thrift(self) -> Any:
        return _tt.HiveObjectRef(
            objectType=int(self.type), dbName=self.db, objectName=self.table, columnName=self.column
        )

    @classmethod
    def from_thrift(cls, ref: Any) -> HiveObject:
        return cls(
            ObjectType(ref.objectType), ref.dbName or None, ref.objectName or None, ref.columnName or None
        )

    def __str__(self) -> str:
        if self.type is ObjectType.GLOBAL:
            return "server"
        parts = [p for p in (self.db, self.table, self.column) if p is not None]
        return f"{self.type.name.lower()} {'.'.join(parts)}"


@dataclass(frozen=True, order=True)
class Grant:
    """One privilege of one principal on one object, as the metastore keeps it.

    Equality ignores ``create_time`` (the server stamps it); privileges are compared as
    the server spells them (``SELECT``, ``INSERT``, ``UPDATE``, ``DELETE``, ``CREATE``,
    ``All`` for the admin role's global grant...)."""

    obj: HiveObject
    principal: str
    principal_type: PrincipalType
    privilege: str
    grantor: str = "pushdown"
    grantor_type: PrincipalType = PrincipalType.USER
    grant_option: bool = False
    create_time: int = field(default=0, compare=False)

    def to_thrift(self) -> Any:
        return _tt.HiveObjectPrivilege(
            hiveObject=self.obj.to_thrift(),
            principalName=self.principal,
            principalType=int(self.principal_type),
            grantInfo=_tt.PrivilegeGrantInfo(
                privilege=self.privilege,
                createTime=self.create_time,
                grantor=self.grantor,
                grantorType=int(self.grantor_type),
                grantOption=self.grant_option,
            ),
        )

    @classmethod
    def from_thrift(cls, row: Any) -> Grant:
        info = row.grantInfo
        return cls(
            HiveObject.from_thrift(row.hiveObject),
            row.principalName,
            PrincipalType(row.principalType),
            info.privilege,
            info.grantor or "",
            PrincipalType(info.grantorType) if info.grantorType else PrincipalType.USER,
            bool(info.grantOption),
            info.createTime or 0,
        )

    def __str__(self) -> str:
        option = " with grant option" if self.grant_option else ""
        return (
            f"{self.privilege} on {self.obj} to {self.principal_type.name.lower()} {self.principal}"
            f"{option} (by {self.grantor})"
        )


@dataclass(frozen=True, order=True)
class RoleGrant:
    """A role held by a user, group or role."""

    role: str
    principal: str
    principal_type: PrincipalType
    grantor: str = ""
    grantor_type: PrincipalType = PrincipalType.USER
    grant_option: bool = False

    @classmethod
    def from_thrift(cls, row: Any) -> RoleGrant:
        return cls(
            row.roleName,
            row.principalName,
            PrincipalType(row.principalType),
            row.grantorName or "",
            PrincipalType(row.grantorPrincipalType) if row.grantorPrincipalType else PrincipalType.USER,
            bool(row.grantOption),
        )


@dataclass(frozen=True)
class PrivilegeSet:
    """``get_privilege_set``'s answer: privilege names by user, group and role."""

    users: dict[str, frozenset[str]]
    groups: dict[str, frozenset[str]]
    roles: dict[str, frozenset[str]]
    #: the privilege names held WITH GRANT OPTION (``PrivilegeGrantInfo.grantOption``), however
    options: frozenset[str] = frozenset()

    @property
    def all(self) -> frozenset[str]:
        """Every privilege the user holds on the object, however (``All`` stays as spelled)."""
        out: set[str] = set()
        for part in (self.users, self.groups, self.roles):
            for names in part.values():
                out |= names
        return frozenset(out)

    @classmethod
    def from_thrift(cls, ps: Any) -> PrivilegeSet:
        def names(by: dict[str, list[Any]] | None) -> dict[str, frozenset[str]]:
            return {k: frozenset(i.privilege for i in v) for k, v in (by or {}).items()}

        parts = (ps.userPrivileges, ps.groupPrivileges, ps.rolePrivileges)
        options = frozenset(
            i.privilege for by in parts for infos in (by or {}).values() for i in infos if i.grantOption
        )
        return cls(names(ps.userPrivileges), names(ps.groupPrivileges), names(ps.rolePrivileges), options)


def parse_uri(uri: str) -> tuple[str, int]:
    """``thrift://host:port`` (the form ``hive.metastore.uris`` uses) -> (host, port)."""
    parts = urlsplit(uri)
    if parts.scheme != "thrift" or not parts.hostname or not parts.port:
        raise ValueError(f"not a metastore URI (want thrift://HOST:PORT): {uri!r}")
    return parts.hostname, parts.port


_PERMANENT: dict[str, type[HiveRefused]] = {
    "NoSuchObjectException": HiveNotFound,
    "UnknownDBException": HiveNotFound,  # the batch table read's answer for a missing database
    "AlreadyExistsException": HiveAlreadyExists,
}


class MetastoreClient:
    """One connection to one metastore. Not thread-safe; one per thread.

    ``calls`` counts the Thrift calls made by name, ``rows`` the grants and names read
    back (for benchmarks and the backend's "calls made" numbers)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        backend: str = "hive",
    ) -> None:
        self.host, self.port = host, port
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.backend = backend
        self.calls: Counter[str] = Counter()
        self.rows = 0
        self._transport: Any = None
        self._client: Any = None
        #: the metastore answers only the request forms of some calls (Hive 4)
        self._requests_only = False

    @classmethod
    def connect(
        cls, uri: str, *, timeout: float = 30.0, connect_timeout: float = 10.0, backend: str = "hive"
    ) -> Self:
        """Connect now (a failure raises :class:`HiveUnavailable` at once)."""
        host, port = parse_uri(uri)
        client = cls(host, port, timeout=timeout, connect_timeout=connect_timeout, backend=backend)
        client.open()
        return client

    @property
    def uri(self) -> str:
        return f"thrift://{self.host}:{self.port}"

    # -- the connection -----------------------------------------------------------------

    def open(self) -> None:
        if self._client is not None:
            return
        sock = TSocket.TSocket(self.host, self.port)
        sock.setTimeout(self.connect_timeout * 1000)
        transport = TTransport.TBufferedTransport(sock)
        try:
            transport.open()
        except (TException, OSError) as exc:
            raise HiveUnavailable(
                self.backend, f"cannot connect to the metastore at {self.uri}: {exc}"
            ) from None
        sock.setTimeout(self.timeout * 1000)
        self._transport = transport
        self._client = _hms.Client(TBinaryProtocol.TBinaryProtocol(transport))

    def close(self) -> None:
        if self._transport is not None:
            try:
                self._transport.close()
            finally:
                self._transport = self._client = None

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _call(self, name: str, *args: Any) -> Any:
        """Call one Thrift method; map its failures to the classes above."""
        self.open()
        self.calls[name] += 1
        try:
            return getattr(self._client, name)(*args)
        except TTransport.TTransportException as exc:
            self.close()  # the stream is in an unknown state: the next call reconnects
            raise HiveUnavailable(
                self.backend, f"{name}: the metastore at {self.uri} went away: {exc}"
            ) from None
        except (TimeoutError, ConnectionError, OSError) as exc:
            self.close()
            raise HiveUnavailable(
                self.backend, f"{name}: no answer from the metastore at {self.uri}: {exc}"
            ) from None
        except TApplicationException as exc:
            raise HiveRefused(self.backend, f"{name}: the metastore answered {exc.message or exc}") from None
        except TException as exc:  # MetaException, InvalidObjectException, NoSuchObject...
            kind = type(exc).__name__
            words = getattr(exc, "message", None) or str(exc)
            raise _PERMANENT.get(kind, HiveRefused)(self.backend, f"{name}: {kind}: {words}") from None

    # -- inventory ----------------------------------------------------------------------

    def get_all_databases(self) -> list[str]:
        names: list[str] = self._call("get_all_databases")
        self.rows += len(names)
        return names

    def get_all_tables(self, db: str) -> list[str]:
        names: list[str] = self._call("get_all_tables", db)
        self.rows += len(names)
        return names

    def get_tables(self, db: str, pattern: str) -> list[str]:
        """Table names of ``db`` matching a metastore pattern (``*`` and ``|``)."""
        names: list[str] = self._call("get_tables", db, pattern)
        self.rows += len(names)
        return names

    def table_exists(self, db: str, table: str) -> bool:
        # Hive 4 has no get_table; the batch read answers on 2.3 and 4 alike
        try:
            return bool(self.get_table_objects(db, [table]))
        except HiveNotFound:
            return False

    def create_database(self, db: str, location: str | None = None, owner: str | None = None) -> None:
        self._call(
            "create_database",
            _tt.Database(
                name=db,
                description="",
                locationUri=location,
                parameters={},
                ownerName=owner,
                ownerType=int(USER) if owner else None,
            ),
        )

    def get_database(self, db: str) -> Any:
        """``get_database``: the Thrift database (owner name and type, location, parameters)."""
        return self._call("get_database", db)

    def set_database_owner(self, db: str, owner: str, owner_type: PrincipalType = USER) -> None:
        """``alter_database`` with another owner (what ``ALTER DATABASE ... SET OWNER`` does)."""
        row = self._call("get_database", db)
        row.ownerName, row.ownerType = owner, int(owner_type)
        self._call("alter_database", db, row)

    def set_table_owner(self, db: str, table: str, owner: str) -> None:
        """``alter_table`` with another owner (what ``ALTER TABLE ... SET OWNER`` does)."""
        found = self.get_table_objects(db, [table])  # Hive 4 has no plain get_table
        if not found:
            raise HiveRefused(self.backend, f"set_table_owner: no table {db}.{table}")
        row = found[0]
        row.owner = owner
        self._call("alter_table", db, table, row)

    def drop_database(self, db: str, *, cascade: bool = True, delete_data: bool = True) -> None:
        self._call("drop_database", db, delete_data, cascade)

    def create_table(
        self,
        db: str,
        table: str,
        columns: Sequence[tuple[str, str]] = (("id", "int"),),
        *,
        owner: str = "pushdown",
        location: str | None = None,
        partitions: Sequence[tuple[str, str]] = (),
        parameters: dict[str, str] | None = None,
    ) -> None:
        """A plain text-format managed table (what tests and demos need; Spark makes real ones),
        partitioned by ``partitions`` (name, type), with table ``parameters``."""
        sd = _tt.StorageDescriptor(
            cols=[_tt.FieldSchema(name, kind, "") for name, kind in columns],
            location=location,
            inputFormat="org.apache.hadoop.mapred.TextInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            serdeInfo=_tt.SerDeInfo(
                serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}
            ),
            parameters={},
            bucketCols=[],
            sortCols=[],
            numBuckets=-1,
            compressed=False,
        )
        self._call(
            "create_table",
            _tt.Table(
                tableName=table,
                dbName=db,
                owner=owner,
                sd=sd,
                partitionKeys=[_tt.FieldSchema(name, kind, "") for name, kind in partitions],
                parameters=dict(parameters or {}),
                tableType="MANAGED_TABLE",
            ),
        )

    def get_table_objects(self, db: str, tables: Sequence[str]) -> list[Any]:
        """``get_table_objects_by_name``: the Thrift tables (owner, columns) of ``tables``, one
        call (``get_table_objects_by_name_req`` on a metastore without it: Hive 4)."""
        rows: list[Any]
        if not self._requests_only:
            try:
                rows = self._call("get_table_objects_by_name", db, list(tables)) or []
            except HiveRefused as exc:
                if "Invalid method name" not in str(exc):
                    raise
                self._requests_only = True
        if self._requests_only:
            found = self._call(
                "get_table_objects_by_name_req", _tt.GetTablesRequest(dbName=db, tblNames=list(tables))
            )
            rows = list(found.tables or [])
        self.rows += len(rows)
        return rows

    def drop_table(self, db: str, table: str, *, delete_data: bool = True) -> None:
        self._call("drop_table", db, table, delete_data)

    # -- privileges ---------------------------------------------------------------------

    def list_privileges(
        self,
        obj: HiveObject,
        principal: str | None = None,
        principal_type: PrincipalType | None = None,
    ) -> list[Grant]:
        """The grants on ``obj``: of every principal (one call) when ``principal`` is None."""
        rows = self._call(
            "list_privileges",
            principal,
            None if principal_type is None else int(principal_type),
            obj.to_thrift(),
        )
        self.rows += len(rows or ())
        return [Grant.from_thrift(r) for r in rows or ()]

    def list_principal_privileges(self, principal: str, principal_type: PrincipalType) -> list[Grant]:
        """Everything one principal holds, on every object, in one call."""
        rows = self._call(
            "list_privileges", principal, int(principal_type), _tt.HiveObjectRef(objectType=None)
        )
        self.rows += len(rows or ())
        return [Grant.from_thrift(r) for r in rows or ()]

    def _bag(self, grants: Iterable[Grant]) -> Any:
        return _tt.PrivilegeBag(privileges=[g.to_thrift() for g in grants])

    def grant_privileges(self, grants: Iterable[Grant]) -> int:
        """Grant all of ``grants`` in ONE call (the server applies them all or none).
        Every one must be missing on the server (a duplicate fails the call). Returns the count."""
        bag = self._bag(grants)
        if bag.privileges:
            self._call("grant_privileges", bag)
        return len(bag.privileges)

    def revoke_privileges(self, grants: Iterable[Grant]) -> int:
        """Revoke all of ``grants`` in ONE call; every one must be held (else the call fails)."""
        bag = self._bag(grants)
        if bag.privileges:
            self._call("revoke_privileges", bag)
        return len(bag.privileges)

    def get_privilege_set(self, obj: HiveObject, user: str, groups: Iterable[str] = ()) -> PrivilegeSet:
        """What ``user`` (a member of ``groups``) holds on ``obj``: own, groups' and roles' grants."""
        return PrivilegeSet.from_thrift(self._call("get_privilege_set", obj.to_thrift(), user, list(groups)))

    # -- roles --------------------------------------------------------------------------

    def get_role_names(self) -> list[str]:
        names: list[str] = self._call("get_role_names")
        self.rows += len(names)
        return names

    def create_role(self, role: str, owner: str = "pushdown") -> None:
        """Create a role (one that exists fails with an opaque internal error: check first)."""
        self._call("create_role", _tt.Role(roleName=role, createTime=0, ownerName=owner))

    def drop_role(self, role: str) -> None:
        self._call("drop_role", role)

    def grant_role(
        self,
        role: str,
        principal: str,
        principal_type: PrincipalType,
        *,
        grantor: str = "pushdown",
        grantor_type: PrincipalType = PrincipalType.USER,
        grant_option: bool = False,
    ) -> None:
        self._call(
            "grant_role", role, principal, int(principal_type), grantor, int(grantor_type), grant_option
        )

    def revoke_role(self, role: str, principal: str, principal_type: PrincipalType) -> None:
        self._call("revoke_role", role, principal, int(principal_type))

    def list_roles(self, principal: str, principal_type: PrincipalType) -> list[str]:
        """The roles a principal holds directly (users also get ``public``)."""
        rows = self._call("list_roles", principal, int(principal_type))
        self.rows += len(rows or ())
        return [r.roleName for r in rows or ()]

    def list_role_owners(self, principal: str, principal_type: PrincipalType) -> dict[str, str]:
        """The roles a principal holds directly, each with its owner (``list_roles``)."""
        rows = self._call("list_roles", principal, int(principal_type))
        self.rows += len(rows or ())
        return {r.roleName: r.ownerName or "" for r in rows or ()}

    def get_principals_in_role(self, role: str) -> list[RoleGrant]:
        """Who holds ``role`` directly, with grantor and grant option (one call per role)."""
        resp = self._call("get_principals_in_role", _tt.GetPrincipalsInRoleRequest(roleName=role))
        rows = resp.principalGrants or []
        self.rows += len(rows)
        return [RoleGrant.from_thrift(r) for r in rows]

    def get_role_grants_for_principal(self, principal: str, principal_type: PrincipalType) -> list[RoleGrant]:
        req = _tt.GetRoleGrantsForPrincipalRequest(
            principal_name=principal, principal_type=int(principal_type)
        )
        rows = self._call("get_role_grants_for_principal", req).principalGrants or []
        self.rows += len(rows)
        return [RoleGrant.from_thrift(r) for r in rows]


def iter_chunks(items: Sequence[Grant], size: int) -> Iterator[Sequence[Grant]]:
    """``items`` in slices of at most ``size`` (for callers that bound one call's size)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
