"""Hand-made state outside the fence that can reach a user, read on every sync and
reported (pushdown may not remove what others made; ``manage_foreign_grants`` aside).

What a sync reads beyond its grants, and what it costs:

- the holders of each role that is not managed (no prefix, the prefix in another case, an
  earlier ``role_prefix``) and carries a grant by another hand on an object read (or on
  the server, or a column of a table read, or owns a database or table read), and of
  every role outside the fence that holds such a role (nested): one
  ``get_principals_in_role`` per such role; a finding when anybody holds it. A user's
  membership of one of those roles that pushdown gave (granted by its grantor, of a role
  its grantor owns: a role of an earlier ``role_prefix`` keeps the members pushdown gave
  it) is pushdown's fact, never wanted: revoked, so another hand's grant never reaches a
  user through pushdown (one ``list_roles`` per such user, to read the role's owner);
- the holders of the metastore's ``admin`` role: one call per sync;
- the server-level (GLOBAL) grants: one call per sync;
- the owner of each database read: one ``get_database`` per database;
- the owners, columns and partition-level privilege setting of the tables read: one
  ``get_table_objects_by_name`` per database read, then one ``list_privileges`` per
  column of those tables (the storage descriptor's and the partition columns: the
  metastore keeps and answers a grant on a partition column like any other).

Names are compared as the metastore's database compares them: trailing blanks dropped,
case folded (``'alice '`` is ``alice``, ``'public '`` is ``public``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_hive.facts import GROUP, ROLE, USER, HiveFact, HiveGlobal, HiveMember
from pushdown_hive.identity import Identity
from pushdown_hive.metastore import Listed, Member, Metastore, Other, Refused, TableInfo

#: the tail of every finding here: pushdown leaves it alone
ALONE = "pushdown leaves it alone (revoke it by hand, or set manage_foreign_grants = true)"


def bare(name: str) -> str:
    """A principal name as the metastore compares it."""
    return name.rstrip(" ").lower()


def is_public(principal_type: str, name: str) -> bool:
    return principal_type == ROLE and bare(name) == "public"


def owners_of(model: Model, catalog: str, identity: Identity) -> Callable[[str, str | None, str], bool]:
    """Whether the model makes the metastore user named so (compared as the metastore
    does) the owner of database ``db`` (``table`` ``None``) or of its table: looked up by
    key for the objects read, every spelling the metastore folds into them included."""

    def owns(db: str, table: str | None, owner: str) -> bool:
        schema = ObjectRef(SecurableType.SCHEMA, (catalog, db))
        exact = schema if table is None else ObjectRef(SecurableType.TABLE, (catalog, db, table))
        spellings = [exact]
        for obj in model.capitals_within(schema):
            if obj.type is exact.type and tuple(n.lower() for n in obj.names[1:]) == exact.names[1:]:
                spellings.append(obj)
        for obj in spellings:
            user = model.owners.get(obj)
            name = None if user is None else identity.name(user)
            if name is not None and bare(name) == bare(owner):
                return True
        return False

    return owns


@dataclass(frozen=True)
class Fence:
    """What is pushdown's among the roles: ``fenced``, a role of its prefix; ``grantor``,
    its grantor's name (a USER grantor of that name, on a role that name owns, made a
    membership pushdown's: pushdown creates its roles owned by its grantor)."""

    fenced: Callable[[str], bool]
    grantor: str

    def outside(self, principal_type: str, name: str) -> bool:
        """A role outside the fence that holders reach things through (not ``public``)."""
        return principal_type == ROLE and not self.fenced(name) and not is_public(ROLE, name)


class Hostile:
    """Reads (counted in ``calls``) and the findings they lead to."""

    def __init__(
        self, ms: Metastore, managed_user: Callable[[str], bool], catalog: str, fence: Fence | None = None
    ) -> None:
        self.ms = ms
        self.managed_user = managed_user
        self.catalog = catalog
        #: with a fence, the memberships pushdown gave to roles outside it that another
        #: hand's grant or ownership reaches users through are found (:meth:`walk`)
        self.fence = fence
        self.calls = 0
        self.findings: list[str] = []
        #: pushdown's own grantor's server-level grants, and its users' memberships of
        #: roles outside the fence: facts, never wanted
        self.own: set[HiveFact] = set()
        #: the holders of each role outside the fence read by a walk
        self.read: dict[str, list[Member]] = {}
        #: the roles each user holds directly, with their owners (``list_roles``)
        self.owners: dict[str, dict[str, str]] = {}

    def _members(self, role: str) -> list[tuple[str, str]]:
        return [(m.principal_type, m.principal) for m in self._memberships(role)]

    def _memberships(self, role: str) -> list[Member]:
        self.calls += 1
        try:
            return self.ms.memberships(role)
        except Refused:
            return []  # dropped meanwhile: nobody holds it

    def roles(self, listed: Iterable[Listed], ours: Callable[[Listed], bool], fence: Fence) -> None:
        """Grants by other hands to roles outside the fence that somebody holds (and the
        memberships pushdown gave that they reach users through: :meth:`walk`)."""
        by_role: dict[str, list[Listed]] = {}
        for x in listed:
            g = x.grant
            if not ours(x) and fence.outside(g.principal_type, g.principal):
                by_role.setdefault(g.principal, []).append(x)
        for role, grants in sorted(by_role.items()):
            holders = [(m.principal_type, m.principal) for m in self.walk(role)]
            if not holders:
                continue
            who = ", ".join(f"{kind} {name!r}" for kind, name in sorted(holders))
            for x in grants:
                self.findings.append(
                    f"{x.grant} (granted by {x.grantor_type} {x.grantor!r}, not by pushdown; in catalog "
                    f"{self.catalog}) reaches role {role!r}'s holders ({who}), outside pushdown's roles: "
                    + ALONE
                )

    def walk(self, role: str) -> list[Member]:
        """The direct holders of ``role``, a role outside the fence that another hand's
        grant or ownership reaches its holders through. The roles outside the fence
        holding it are followed (each read once, cycles too), and every user membership on
        the way that is pushdown's (its grantor's, of a role its grantor owns: a role of
        an earlier ``role_prefix``) is kept in ``own``, to be revoked. A managed role
        holding it is revoked as nesting by hand (:class:`HiveHeld`): the walk stops at
        the fence. Without a fence, the holders only."""
        fence = self.fence
        if fence is None:
            return self._memberships(role)
        todo = [role]
        while todo:
            name = todo.pop()
            if name in self.read:
                continue
            self.read[name] = rows = self._memberships(name)
            for m in rows:
                if m.principal_type == USER and self._given(fence, name, m):
                    self.own.add(HiveMember(name, m.principal, m.admin))
                elif fence.outside(m.principal_type, m.principal):
                    todo.append(m.principal)
        return self.read[role]

    def _given(self, fence: Fence, role: str, m: Member) -> bool:
        """Whether pushdown gave user ``m`` the role: its grantor granted it, and the role
        is one pushdown created (owned by its grantor; one ``list_roles`` per user)."""
        if m.grantor != fence.grantor or m.grantor_type != USER:
            return False
        if m.principal not in self.owners:
            self.calls += 1
            try:
                self.owners[m.principal] = self.ms.role_owners(m.principal)
            except Refused:
                self.owners[m.principal] = {}
        return self.owners[m.principal].get(role) == fence.grantor

    def _walk_from(self, principal_type: str, name: str) -> None:
        """Another hand's server-level or column grant, or ownership, held by a role
        outside the fence: the memberships pushdown gave on the way are found too."""
        if self.fence is not None and self.fence.outside(principal_type, name):
            self.walk(name)

    def reaches(self, principal_type: str, name: str) -> bool:
        if principal_type == USER:
            return self.managed_user(name)
        return principal_type in (GROUP, ROLE)

    def admin(self) -> None:
        """Holders of the metastore's ``admin`` role that a model user (or everyone) is."""
        for kind, name in self._members("admin"):
            if kind == USER and not self.managed_user(name):
                continue
            self.findings.append(
                f"{kind} {name!r} holds the metastore's role 'admin' (every privilege after SET ROLE ADMIN, "
                f"with grant option; in catalog {self.catalog}), which the model does not give: {ALONE}"
            )

    def server(self, ours: Callable[[Other], bool]) -> None:
        """Server-level grants: pushdown never grants there. Its own grantor's are facts
        (``own``: revoked), every other one reaching somebody is reported."""
        self.calls += 1
        for g in self.ms.server_grants():
            if ours(g):
                self.own.add(HiveGlobal(g.principal_type, g.principal, g.privilege))
                continue
            if g.principal_type == ROLE and bare(g.principal) == "admin":
                continue  # the metastore's own: its holders are reported
            if not self.reaches(g.principal_type, g.principal):
                continue
            self._walk_from(g.principal_type, g.principal)
            self.findings.append(
                f"{g.privilege} ON the server TO {g.principal_type} {g.principal!r} (granted by "
                f"{g.grantor_type} {g.grantor!r}, not by pushdown; catalog {self.catalog}): a server-level "
                "grant covers every database and table and the model grants nothing on the metalake; "
                "pushdown leaves it alone (revoke it by hand)"
            )

    def databases(self, dbs: Iterable[str], owns: Callable[[str, str], bool]) -> None:
        """Owners of the databases read that the model does not make: HiveServer2's
        SQL-standard authorizer lets a database's owner create (and drop) its tables and
        alter or drop it, with no grant row. A user owner is a finding when it is a model
        user, a role or group owner whenever set (its holders are resolved by the server)."""
        for db in sorted(dbs):
            self.calls += 1
            try:
                owner, kind = self.ms.database_owner(db)
            except Refused:
                continue  # dropped meanwhile: the grant read says so
            if not owner or (kind == USER and (not self.managed_user(owner) or owns(db, owner))):
                continue
            self._walk_from(kind, owner)
            # the metastore gives its own ``default`` database to the role ``public`` (everyone)
            built_in = (db, kind, owner) == ("default", ROLE, "public")
            how = "as the metastore creates it" if built_in else "set by hand"
            self.findings.append(
                f"database {db} has owner {kind} {owner!r} on the metastore ({how}; catalog "
                f"{self.catalog}), which the model does not make its owner: HiveServer2 lets a database's "
                "owner create, alter and drop there; pushdown leaves owners alone (set it back by hand)"
            )

    def tables(
        self,
        tables: Iterable[tuple[str, str]],
        owns: Callable[[str, str, str], bool],
        known: Mapping[str, Sequence[TableInfo]] | None = None,
    ) -> None:
        """Owners the model does not make, and column grants, of the tables read (those
        of a database in ``known``, the read's own answer for them: not asked again)."""
        by_db: dict[str, list[str]] = {}
        for db, table in tables:
            by_db.setdefault(db, []).append(table)
        for db, names in sorted(by_db.items()):
            if known is not None and db in known:
                infos = list(known[db])
            else:
                self.calls += 1
                try:
                    infos = self.ms.table_infos(db, sorted(names))
                except Refused:
                    continue  # dropped meanwhile: the grant read says so
            for info in infos:
                self._partition_level(db, info)
                if info.owner and info.owner_type != USER:
                    self._walk_from(info.owner_type, info.owner)
                    self.findings.append(
                        f"table {db}.{info.table} has owner {info.owner_type} {info.owner!r} "
                        f"on the metastore (catalog {self.catalog}): its holders or members get an owner's "
                        "rights, which the model does not give; pushdown leaves owners alone (set it back "
                        "by hand)"
                    )
                elif info.owner and self.managed_user(info.owner) and not owns(db, info.table, info.owner):
                    self.findings.append(
                        f"table {db}.{info.table} has owner {info.owner!r} on the metastore (set by hand; "
                        f"catalog {self.catalog}), which the model does not make its owner: HiveServer2 "
                        "gives an owner DROP, ALTER and GRANT there; pushdown leaves owners alone "
                        "(set it back by hand)"
                    )
                for column in info.columns:
                    self._column(db, info.table, column)

    def _partition_level(self, db: str, info: TableInfo) -> None:
        if info.partition_level:
            self.findings.append(
                f"table {db}.{info.table} is partitioned with PARTITION_LEVEL_PRIVILEGE = true (catalog "
                f"{self.catalog}): Hive's legacy authorizer then decides on each partition's own grants, "
                "which pushdown neither reads nor writes; unset the parameter, or check its partitions' "
                "grants by hand"
            )

    def _column(self, db: str, table: str, column: str) -> None:
        self.calls += 1
        try:
            rows = self.ms.column_grants(db, table, column)
        except Refused:
            return
        for g in rows:
            if self.reaches(g.principal_type, g.principal) or is_public(g.principal_type, g.principal):
                self._walk_from(g.principal_type, g.principal)
                self.findings.append(
                    f"{g.privilege} ON {g.on} TO {g.principal_type} {g.principal!r} (granted by "
                    f"{g.grantor!r}; catalog {self.catalog}): pushdown manages tables, not columns; a "
                    "column grant is never wanted and pushdown does not revoke it: revoke it by hand"
                )
