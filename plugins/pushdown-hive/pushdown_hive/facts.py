"""The facts the Hive backend plans with: privileges granted on databases and tables.

A fact is in metastore terms (principal type and name, database, table, privilege), so
what ``list_privileges`` returns compares equal to what the model compiles to.

The modifiers a grant carries are part of it: a privilege granted WITH GRANT OPTION,
and a role held WITH ADMIN OPTION, let the holder pass it on (HiveServer2's SQL-standard
authorizer checks exactly these), which the model never gives. So a grant the model
wants, held with the option, is another fact than the one the model compiles to: the
plan revokes it and grants it again without the option. The grantor and its type are
kept with a grant (plans and findings name them) but do not tell two facts apart: the
backend manages only the grants its own grantor made (its fence), and the metastore
refuses a second grant of the same privilege to the same principal on the same object
whoever granted the first, so two grantors can never hold one fact apart.

A fact is its own key: a grant (with its option) exists or it does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The principal types of the metastore's Thrift API (``PrincipalType``).
USER = "USER"
GROUP = "GROUP"
ROLE = "ROLE"
PRINCIPAL_TYPES = (USER, GROUP, ROLE)


@dataclass(frozen=True, order=True)
class HiveGrant:
    """``privilege`` on database ``db`` (``table`` None) or on table ``db.table``."""

    principal_type: str
    principal: str
    db: str
    table: str | None
    privilege: str
    #: held WITH GRANT OPTION (the holder may grant it on): never wanted by the model
    grant_option: bool = False
    #: who granted it (a plan names it); not compared: see the module's docstring
    grantor: str = field(default="", compare=False)
    grantor_type: str = field(default="USER", compare=False)

    #: grants are sent after anything they may depend on (a role a grant names)
    phase = 1

    @property
    def key(self) -> HiveGrant:
        return self

    def on(self) -> str:
        what = "DATABASE" if self.table is None else "TABLE"
        name = self.db if self.table is None else f"{self.db}.{self.table}"
        return f"{what} {_quote(name)}"

    def to_json(self) -> dict[str, Any]:
        row: list[Any] = [self.principal_type, self.principal, self.db, self.table, self.privilege]
        return {"hive": [*row, True] if self.grant_option else row}

    def __str__(self) -> str:
        option = " WITH GRANT OPTION" if self.grant_option else ""
        return f"{self.privilege} ON {self.on()} TO {self.principal_type} {_quote(self.principal)}{option}"


@dataclass(frozen=True, order=True)
class HiveRole:
    """A metastore role pushdown manages (its name carries the role prefix)."""

    name: str

    #: created before the grants and memberships that name it, dropped after them
    phase = 0

    @property
    def key(self) -> HiveRole:
        return self

    def to_json(self) -> dict[str, Any]:
        return {"hive_role": self.name}

    def __str__(self) -> str:
        return f"ROLE {_quote(self.name)}"


@dataclass(frozen=True, order=True)
class HiveMember:
    """Metastore role ``role`` granted to user ``user``."""

    role: str
    user: str
    #: held WITH ADMIN OPTION (the user may grant the role on): never wanted by the model
    admin: bool = False

    phase = 1

    @property
    def key(self) -> HiveMember:
        return self

    def to_json(self) -> dict[str, Any]:
        return {"hive_member": [self.role, self.user, True] if self.admin else [self.role, self.user]}

    def __str__(self) -> str:
        option = " WITH ADMIN OPTION" if self.admin else ""
        return f"ROLE {_quote(self.role)} TO USER {_quote(self.user)}{option}"


@dataclass(frozen=True, order=True)
class HiveHeld:
    """Role ``role`` held by a principal pushdown never grants a role to: a managed role
    held by a group or a role, or any role held by a managed role (nested by hand). It
    gives the holders more than the model does, so it is never wanted: a plan revokes it."""

    role: str
    principal_type: str
    principal: str

    phase = 1

    @property
    def key(self) -> HiveHeld:
        return self

    def to_json(self) -> dict[str, Any]:
        return {"hive_held": [self.role, self.principal_type, self.principal]}

    def __str__(self) -> str:
        return f"ROLE {_quote(self.role)} TO {self.principal_type} {_quote(self.principal)}"


@dataclass(frozen=True, order=True)
class HiveGlobal:
    """A server-level (GLOBAL) privilege by pushdown's grantor (made by hand: pushdown
    never grants there). It covers every database and table, so it is never wanted."""

    principal_type: str
    principal: str
    privilege: str

    phase = 1

    @property
    def key(self) -> HiveGlobal:
        return self

    def to_json(self) -> dict[str, Any]:
        return {"hive_global": [self.principal_type, self.principal, self.privilege]}

    def __str__(self) -> str:
        return f"{self.privilege} ON SERVER TO {self.principal_type} {_quote(self.principal)}"


HiveFact = HiveGrant | HiveRole | HiveMember | HiveHeld | HiveGlobal


def _quote(name: str) -> str:
    """Backquoted for display (plans are read by people; the API takes names as values)."""
    return "`" + name.replace("`", "``") + "`"


def fact_from_json(data: Mapping[str, Any]) -> HiveFact:
    """Rebuild a fact from ``to_json`` (a saved plan)."""
    if isinstance(data.get("hive_role"), str):
        return HiveRole(data["hive_role"])
    nested = data.get("hive_held")
    if isinstance(nested, list) and len(nested) == 3 and nested[1] in PRINCIPAL_TYPES:
        return HiveHeld(str(nested[0]), str(nested[1]), str(nested[2]))
    server = data.get("hive_global")
    if isinstance(server, list) and len(server) == 3 and server[0] in PRINCIPAL_TYPES:
        return HiveGlobal(str(server[0]), str(server[1]), str(server[2]))
    member = data.get("hive_member")
    if isinstance(member, list) and len(member) in (2, 3):
        return HiveMember(str(member[0]), str(member[1]), len(member) == 3 and member[2] is True)
    try:
        row = list(data["hive"])
        option = len(row) == 6 and row.pop() is True
        ptype, principal, db, table, privilege = row
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a saved Hive grant: {dict(data)!r}") from exc
    if ptype not in PRINCIPAL_TYPES:
        raise ValueError(f"not a saved Hive grant (principal type {ptype!r}): {dict(data)!r}")
    return HiveGrant(
        str(ptype), str(principal), str(db), None if table is None else str(table), str(privilege), option
    )
