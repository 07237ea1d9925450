"""What the backend needs from a metastore, in plain Python values.

:class:`Metastore` is the narrow surface the backend calls; :mod:`pushdown_hive.calls`
adapts the Thrift client to it, and the unit tests put a fake behind it that answers
like the real server (a duplicate grant or a missing revoke is refused, and a refused
batch changes nothing). Every method is one Thrift call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pushdown_hive.facts import HiveGrant


@dataclass(frozen=True)
class Listed:
    """One privilege grant as ``list_privileges`` shows it."""

    grant: HiveGrant
    grantor: str
    grantor_type: str
    grant_option: bool = False


@dataclass(frozen=True)
class Other:
    """A grant the backend never manages as a fact (on the server, or on a column)."""

    principal_type: str
    principal: str
    privilege: str
    grantor: str
    on: str
    grantor_type: str = "USER"


@dataclass(frozen=True)
class Member:
    """One direct holder of a role as ``get_principals_in_role`` shows it, with who
    granted the membership."""

    principal_type: str
    principal: str
    grantor: str
    grantor_type: str = "USER"
    #: held WITH ADMIN OPTION
    admin: bool = False


@dataclass(frozen=True)
class TableInfo:
    """A table's owner and columns (``get_table_objects_by_name``)."""

    table: str
    owner: str
    #: every column a grant can name: the storage descriptor's, then the partition columns
    columns: tuple[str, ...]
    #: the owner's principal type (Hive 3 and later; a 2.3 table's owner is a USER)
    owner_type: str = "USER"
    #: partitioned, with the table parameter ``PARTITION_LEVEL_PRIVILEGE`` set to true:
    #: Hive's legacy authorizer then decides on each partition's own grants
    partition_level: bool = False


class Refused(Exception):
    """The metastore refused a call (its own words); the same call will fail again."""


class Unreachable(Exception):
    """The metastore did not answer (connection refused, reset or timed out)."""


class Metastore(Protocol):
    def databases(self) -> list[str]:
        """``get_all_databases``."""
        ...

    def tables(self, db: str) -> list[str]:
        """``get_all_tables``: the tables (and views) of one database."""
        ...

    def grants_on(self, db: str, table: str | None) -> list[Listed]:
        """Every principal's grants on one database or table (``list_privileges`` with no
        principal name: one call per object)."""
        ...

    def server_grants(self) -> list[Other]:
        """``list_privileges`` on the server object (GLOBAL): one call."""
        ...

    def revoke_global(self, principal_type: str, principal: str, privilege: str) -> None:
        """``revoke_privileges`` of one server-level privilege."""
        ...

    def table_infos(self, db: str, tables: Sequence[str]) -> list[TableInfo]:
        """``get_table_objects_by_name``: owners and columns of a database's tables, one call."""
        ...

    def database_owner(self, db: str) -> tuple[str, str]:
        """``get_database``: the database's owner and owner type (``("", "USER")`` for none)."""
        ...

    def column_grants(self, db: str, table: str, column: str) -> list[Other]:
        """``list_privileges`` on one column (the metastore lists no table's columns at once)."""
        ...

    def grant(self, grants: Sequence[HiveGrant], grantor: str) -> None:
        """``grant_privileges``: many privileges in one call, all or nothing."""
        ...

    def revoke(self, grants: Sequence[HiveGrant]) -> None:
        """``revoke_privileges``: many privileges in one call, all or nothing."""
        ...

    def privilege_set(self, db: str, table: str | None, user: str, groups: Sequence[str]) -> set[str]:
        """``get_privilege_set``: the privilege names ``user`` holds on the object, directly,
        through ``groups`` or through the roles it holds."""
        ...

    def role_names(self) -> list[str]:
        """``get_role_names``: every role of the metastore."""
        ...

    def members(self, role: str) -> list[tuple[str, str, bool]]:
        """``get_principals_in_role``: (principal type, name, WITH ADMIN OPTION) of each
        direct holder."""
        ...

    def memberships(self, role: str) -> list[Member]:
        """``get_principals_in_role``: each direct holder with the membership's grantor."""
        ...

    def role_owners(self, user: str) -> dict[str, str]:
        """``list_roles`` of a USER: the roles it holds directly, each with its owner."""
        ...

    def roles_held_by_role(self, role: str) -> list[str]:
        """``get_role_grants_for_principal`` of a ROLE: the roles granted to ``role``."""
        ...

    def roles_held_by_user(self, user: str) -> list[str]:
        """``get_role_grants_for_principal`` of a USER: the roles granted to ``user``."""
        ...

    def revoke_role_from(self, role: str, principal_type: str, principal: str) -> None:
        """``revoke_role`` from a principal of any type (a group, a role)."""
        ...

    def create_role(self, role: str, owner: str) -> None: ...

    def drop_role(self, role: str) -> None: ...

    def grant_role(self, role: str, user: str, grantor: str) -> None: ...

    def revoke_role(self, role: str, user: str) -> None: ...

    def close(self) -> None: ...
