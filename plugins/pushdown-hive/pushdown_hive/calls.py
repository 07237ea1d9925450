"""The backend's :class:`~pushdown_hive.metastore.Metastore` over the Thrift client
(:mod:`pushdown_hive.client`): facts in, facts out, one Thrift call per method."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pushdown_hive.client import (
    Grant,
    HiveObject,
    HiveRefused,
    HiveUnavailable,
    MetastoreClient,
    ObjectType,
    PrincipalType,
)
from pushdown_hive.facts import HiveGrant
from pushdown_hive.metastore import Listed, Member, Other, Refused, TableInfo, Unreachable

T = TypeVar("T")


def connect(host: str, port: int, timeout: float, backend: str = "hive") -> ThriftMetastore:
    """A metastore that connects on its first call (a failure then is :class:`Unreachable`)."""
    return ThriftMetastore(
        MetastoreClient(host, port, timeout=timeout, connect_timeout=min(timeout, 10.0), backend=backend)
    )


def _object(db: str, table: str | None) -> HiveObject:
    return HiveObject.database(db) if table is None else HiveObject.of_table(db, table)


def to_client(grant: HiveGrant, grantor: str = "") -> Grant:
    return Grant(
        _object(grant.db, grant.table),
        grant.principal,
        PrincipalType[grant.principal_type],
        grant.privilege,
        grantor=grantor,
        grant_option=grant.grant_option,
    )


def listed(row: Grant) -> Listed | None:
    """A grant on a database or a table as the backend sees it (``None`` for others)."""
    obj = row.obj
    if obj.type not in (ObjectType.DATABASE, ObjectType.TABLE) or obj.db is None or obj.column:
        return None
    table = obj.table if obj.type is ObjectType.TABLE else None
    fact = HiveGrant(
        row.principal_type.name,
        row.principal,
        obj.db,
        table,
        row.privilege,
        row.grant_option,
        row.grantor,
        row.grantor_type.name,
    )
    return Listed(fact, row.grantor, row.grantor_type.name, row.grant_option)


def other(row: Grant, on: str) -> Other:
    return Other(
        row.principal_type.name, row.principal, row.privilege.upper(), row.grantor, on, row.grantor_type.name
    )


def table_info(t: Any) -> TableInfo:
    """A Thrift table's owner, columns and partition-level privilege setting. Its columns
    are those of the storage descriptor (``sd.cols``) and then its partition columns
    (``partitionKeys``): the metastore keeps and answers a grant on either alike."""
    params = t.parameters or {}
    level = str(params.get("PARTITION_LEVEL_PRIVILEGE", "")).strip().upper() == "TRUE"
    cols = [*((t.sd.cols if t.sd else None) or ()), *(t.partitionKeys or ())]
    return TableInfo(
        t.tableName,
        t.owner or "",
        tuple(dict.fromkeys(c.name for c in cols if c is not None and c.name is not None)),
        PrincipalType(t.ownerType).name if getattr(t, "ownerType", None) else "USER",
        bool(t.partitionKeys) and level,
    )


class ThriftMetastore:
    def __init__(self, client: MetastoreClient) -> None:
        self.client = client

    def _do(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except HiveUnavailable as exc:
            raise Unreachable(str(exc)) from None
        except HiveRefused as exc:
            raise Refused(str(exc)) from None

    def databases(self) -> list[str]:
        return self._do(self.client.get_all_databases)

    def tables(self, db: str) -> list[str]:
        return self._do(lambda: self.client.get_all_tables(db))

    def grants_on(self, db: str, table: str | None) -> list[Listed]:
        rows = self._do(lambda: self.client.list_privileges(_object(db, table)))
        return [x for x in map(listed, rows) if x is not None]

    def server_grants(self) -> list[Other]:
        rows = self._do(lambda: self.client.list_privileges(HiveObject.server()))
        return [other(r, "the server (GLOBAL)") for r in rows]

    def revoke_global(self, principal_type: str, principal: str, privilege: str) -> None:
        grant = Grant(HiveObject.server(), principal, PrincipalType[principal_type], privilege)
        self._do(lambda: self.client.revoke_privileges([grant]))

    def table_infos(self, db: str, tables: Sequence[str]) -> list[TableInfo]:
        rows = self._do(lambda: self.client.get_table_objects(db, tables))
        return [table_info(t) for t in rows]

    def database_owner(self, db: str) -> tuple[str, str]:
        row = self._do(lambda: self.client.get_database(db))
        kind = PrincipalType(row.ownerType).name if row.ownerType else "USER"
        return row.ownerName or "", kind

    def column_grants(self, db: str, table: str, column: str) -> list[Other]:
        obj = HiveObject(ObjectType.COLUMN, db, table, column)
        rows = self._do(lambda: self.client.list_privileges(obj))
        return [other(r, f"column {db}.{table}.{column}") for r in rows]

    def grant(self, grants: Sequence[HiveGrant], grantor: str) -> None:
        self._do(lambda: self.client.grant_privileges([to_client(g, grantor) for g in grants]))

    def revoke(self, grants: Sequence[HiveGrant]) -> None:
        self._do(lambda: self.client.revoke_privileges([to_client(g) for g in grants]))

    def privilege_set(self, db: str, table: str | None, user: str, groups: Sequence[str]) -> set[str]:
        return set(self._do(lambda: self.client.get_privilege_set(_object(db, table), user, groups)).all)

    def role_names(self) -> list[str]:
        return self._do(self.client.get_role_names)

    def members(self, role: str) -> list[tuple[str, str, bool]]:
        rows = self._do(lambda: self.client.get_principals_in_role(role))
        return [(r.principal_type.name, r.principal, r.grant_option) for r in rows]

    def memberships(self, role: str) -> list[Member]:
        rows = self._do(lambda: self.client.get_principals_in_role(role))
        return [
            Member(r.principal_type.name, r.principal, r.grantor, r.grantor_type.name, r.grant_option)
            for r in rows
        ]

    def role_owners(self, user: str) -> dict[str, str]:
        return self._do(lambda: self.client.list_role_owners(user, PrincipalType.USER))

    def roles_held_by_role(self, role: str) -> list[str]:
        rows = self._do(lambda: self.client.get_role_grants_for_principal(role, PrincipalType.ROLE))
        return [r.role for r in rows]

    def roles_held_by_user(self, user: str) -> list[str]:
        rows = self._do(lambda: self.client.get_role_grants_for_principal(user, PrincipalType.USER))
        return [r.role for r in rows]

    def revoke_role_from(self, role: str, principal_type: str, principal: str) -> None:
        self._do(lambda: self.client.revoke_role(role, principal, PrincipalType[principal_type]))

    def create_role(self, role: str, owner: str) -> None:
        self._do(lambda: self.client.create_role(role, owner))

    def drop_role(self, role: str) -> None:
        self._do(lambda: self.client.drop_role(role))

    def grant_role(self, role: str, user: str, grantor: str) -> None:
        self._do(lambda: self.client.grant_role(role, user, PrincipalType.USER, grantor=grantor))

    def revoke_role(self, role: str, user: str) -> None:
        self._do(lambda: self.client.revoke_role(role, user, PrincipalType.USER))

    def close(self) -> None:
        self.client.close()
