"""A metastore in memory that answers like the real one where the backend cares: one
call is all or nothing, a duplicate grant (whoever granted the first) and a revoke of a
missing grant are refused, and every call is recorded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from pushdown_hive.facts import HiveGrant
from pushdown_hive.metastore import Listed, Member, Other, Refused, TableInfo, Unreachable


@dataclass
class FakeMetastore:
    dbs: dict[str, set[str]] = field(default_factory=dict)
    held: dict[HiveGrant, Listed] = field(default_factory=dict)
    log: list[tuple[str, int]] = field(default_factory=list)
    refuse: set[HiveGrant] = field(default_factory=set)
    roles: dict[str, set[str]] = field(default_factory=lambda: {"admin": set(), "public": set()})
    #: each role's owner
    owners: dict[str, str] = field(default_factory=dict)
    #: who granted each membership (role, user)
    grantors: dict[tuple[str, str], str] = field(default_factory=dict)
    #: answer this many more calls, then stop answering (a metastore killed mid-apply)
    alive: int | None = None
    #: the items (names, members) the reads of roles answered, per call
    answered: Counter[str] = field(default_factory=Counter)
    #: the table names the listings of tables answered (``get_all_tables``, ``get_table_objects_by_name``)
    table_rows: int = 0

    def _call(self, name: str, size: int = 0) -> None:
        if self.alive is not None:
            if self.alive <= 0:
                raise Unreachable(f"{name}: connection refused")
            self.alive -= 1
        self.log.append((name, size))

    def databases(self) -> list[str]:
        self._call("get_all_databases")
        return sorted(self.dbs)

    def tables(self, db: str) -> list[str]:
        self._call("get_all_tables")
        self.table_rows += len(self.dbs.get(db, ()))
        return sorted(self.dbs.get(db, ()))

    def grants_on(self, db: str, table: str | None) -> list[Listed]:
        self._call("list_privileges")
        return [x for g, x in self.held.items() if g.db == db and g.table == table]

    def server_grants(self) -> list[Other]:
        self._call("list_privileges")
        return []

    def revoke_global(self, principal_type: str, principal: str, privilege: str) -> None:
        self._call("revoke_privileges", 1)
        raise Refused(f"Internal error processing revoke_privileges ({privilege} ON SERVER)")

    def table_infos(self, db: str, tables: Sequence[str]) -> list[TableInfo]:
        self._call("get_table_objects_by_name")
        found = [TableInfo(t, "", ()) for t in tables if t in self.dbs.get(db, ())]
        self.table_rows += len(found)
        return found

    def database_owner(self, db: str) -> tuple[str, str]:
        self._call("get_database")
        return "", "USER"

    def column_grants(self, db: str, table: str, column: str) -> list[Other]:
        self._call("list_privileges")
        return []

    def grant(self, grants: Sequence[HiveGrant], grantor: str) -> None:
        self._call("grant_privileges", len(grants))
        for g in grants:
            if g in self.held or g in self.refuse:
                raise Refused(f"Internal error processing grant_privileges ({g})")
        for g in grants:
            self.held[g] = Listed(g, grantor, "USER")

    def revoke(self, grants: Sequence[HiveGrant]) -> None:
        self._call("revoke_privileges", len(grants))
        for g in grants:
            if g not in self.held or g in self.refuse:
                raise Refused(f"Internal error processing revoke_privileges ({g})")
        for g in grants:
            del self.held[g]

    def privilege_set(self, db: str, table: str | None, user: str, groups: Sequence[str]) -> set[str]:
        self._call("get_privilege_set")
        mine = {("USER", user)} | {("ROLE", r) for r, users in self.roles.items() if user in users}
        return {
            g.privilege
            for g in self.held
            if (g.db, g.table) == (db, table) and (g.principal_type, g.principal) in mine
        }

    def role_names(self) -> list[str]:
        self._call("get_role_names")
        self.answered["get_role_names"] += len(self.roles)
        return sorted(self.roles)

    def members(self, role: str) -> list[tuple[str, str, bool]]:
        self._call("get_principals_in_role")
        self.answered["get_principals_in_role"] += len(self.roles.get(role, ()))
        return [("USER", u, False) for u in sorted(self.roles.get(role, ()))]

    def memberships(self, role: str) -> list[Member]:
        self._call("get_principals_in_role")
        return [Member("USER", u, self.grantors.get((role, u), "")) for u in sorted(self.roles.get(role, ()))]

    def role_owners(self, user: str) -> dict[str, str]:
        self._call("list_roles")
        return {r: self.owners.get(r, "") for r, users in sorted(self.roles.items()) if user in users}

    def roles_held_by_role(self, role: str) -> list[str]:
        self._call("get_role_grants_for_principal")
        return []  # the fake grants roles to users only

    def roles_held_by_user(self, user: str) -> list[str]:
        self._call("get_role_grants_for_principal")
        held = sorted(r for r, users in self.roles.items() if user in users)
        self.answered["get_role_grants_for_principal"] += len(held)
        return held

    def revoke_role_from(self, role: str, principal_type: str, principal: str) -> None:
        self._call("revoke_role")
        raise Refused(f"Internal error processing revoke_role ({role}, {principal_type} {principal})")

    def create_role(self, role: str, owner: str) -> None:
        self._call("create_role")
        if role in self.roles:
            raise Refused(f"Internal error processing create_role ({role})")
        self.roles[role] = set()
        self.owners[role] = owner

    def drop_role(self, role: str) -> None:
        self._call("drop_role")
        if role not in self.roles:
            raise Refused(f"NoSuchObjectException: role {role} does not exist")
        del self.roles[role]
        for g in [g for g in self.held if g.principal_type == "ROLE" and g.principal == role]:
            del self.held[g]

    def grant_role(self, role: str, user: str, grantor: str) -> None:
        self._call("grant_role")
        if role not in self.roles or user in self.roles[role]:
            raise Refused(f"Internal error processing grant_role ({role}, {user})")
        self.roles[role].add(user)
        self.grantors[(role, user)] = grantor

    def revoke_role(self, role: str, user: str) -> None:
        self._call("revoke_role")
        if user not in self.roles.get(role, ()):
            raise Refused(f"Internal error processing revoke_role ({role}, {user})")
        self.roles[role].discard(user)

    def close(self) -> None:
        pass

    def calls(self, name: str) -> list[int]:
        return [size for called, size in self.log if called == name]
