"""Test helpers: a model and a metastore kept side by side, and the privilege-set probe.

``World`` holds the model (catalog ``c`` enforced by backend ``hive1``) and creates the
matching databases and tables on the metastore as an administrator. Worlds of one run
share the metastore but never meet: each has its own database-name prefix, its own
grantor and its own role prefix, so a world's full plan manages only what the world
made (roles are global in the metastore, and whatever another test left behind is
outside every world's fence, not a removal in its plan). ``probe`` asks the
metastore's ``get_privilege_set`` for each user (with its model groups) on each
database and table, and compares each privilege with the evaluator's decision on the
operation the privilege stands for (:data:`pushdown_hive.mapping.OPERATION_OF`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pushdown.decide.evaluator import Evaluator
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown_hive.backend import HiveBackend
from pushdown_hive.client import HiveObject, MetastoreClient
from pushdown_hive.mapping import ALL, CREATE, IMPLIED_BY_ALL, OPERATION_OF

#: the backend's default role_prefix: every world's role prefix starts with it
ROLE_PREFIX = "pd_"
CATALOG = "c"
BACKEND = "hive1"
GRANTOR = "pushdown"
_worlds = itertools.count()


def backend_for(
    hms: Any, map_principal: Callable[[Principal], str] | None = None, **settings: Any
) -> HiveBackend:
    """A Hive backend on the metastore ``hms`` (grantor ``pushdown`` unless given), mapping
    model principals to metastore names with ``map_principal`` (the identity unless given)."""
    context = BackendContext(BACKEND, {"host": hms.host, "port": hms.port, "grantor": GRANTOR, **settings})
    if map_principal is not None:
        context.map_principal = map_principal
    return HiveBackend(context)


def client_for(hms: Any) -> MetastoreClient:
    return MetastoreClient(hms.host, hms.port, timeout=30.0)


def do(model: Model, events: Iterable[Any]) -> None:
    for event in events:
        model.apply(event)


@dataclass
class World:
    """Model schema ``s`` is metastore database ``<prefix>s``; model role ``r`` is metastore
    role ``<role_prefix>r`` (``pd_<prefix>r`` unless given), granted by ``grantor``."""

    hms: Any
    model: Model = field(default_factory=Model)
    prefix: str = field(default_factory=lambda: f"w{next(_worlds)}_")
    role_prefix: str = ""
    grantor: str = ""
    client: MetastoreClient = field(init=False)

    def __post_init__(self) -> None:
        self.role_prefix = self.role_prefix or ROLE_PREFIX + self.prefix
        self.grantor = self.grantor or f"{GRANTOR}_{self.prefix.rstrip('_')}"
        self.client = client_for(self.hms)
        catalog = ObjectRef.of("catalog", (CATALOG,))
        do(self.model, ch.create_object(self.model, catalog, properties={"backend": BACKEND}))

    def db(self, schema: str) -> str:
        return self.prefix + schema

    def role_name(self, role: str) -> str:
        """The metastore role of model role ``role``."""
        return self.role_prefix + role

    def backend(
        self, map_principal: Callable[[Principal], str] | None = None, **settings: Any
    ) -> HiveBackend:
        """A Hive backend fenced to this world: its grantor and its role prefix (unless given)."""
        fence = {"grantor": self.grantor, "role_prefix": self.role_prefix, **settings}
        return backend_for(self.hms, map_principal, **fence)

    def user(self, name: str) -> None:
        do(self.model, ch.add_user(self.model, name))

    def schema(self, schema: str, owner: str | None = None) -> str:
        db = self.db(schema)
        do(self.model, ch.create_object(self.model, ObjectRef.of("schema", (CATALOG, db)), owner))
        self.client.create_database(db)
        return db

    def table(self, schema: str, table: str, owner: str | None = None, *, server: bool = True) -> None:
        db = self.db(schema)
        do(self.model, ch.create_object(self.model, ObjectRef.of("table", (CATALOG, db, table)), owner))
        if server:
            self.client.create_table(db, table, owner="etl")

    def drop_table(self, schema: str, table: str) -> None:
        db = self.db(schema)
        do(self.model, ch.drop_object(self.model, ObjectRef.of("table", (CATALOG, db, table))))
        self.client.drop_table(db, table)

    def role(self, name: str, grants: Iterable[tuple[str, str, str]] = (), to: Iterable[str] = ()) -> None:
        do(self.model, ch.create_role(self.model, name))
        for obj, privilege, condition in grants:
            self.grant(name, obj, privilege, condition)
        for user in to:
            do(self.model, ch.grant_role(self.model, name, Principal.user(user)))

    def grant(self, role: str, obj: str, privilege: str, condition: str = "ALLOW") -> None:
        ref = ObjectRef.parse(obj)
        do(self.model, ch.grant_privileges(self.model, role, ref, [privilege], Condition(condition)))

    def cleanup(self) -> None:
        """Drop the world's databases and its metastore roles (roles are global in the
        metastore: nothing of the world is left for a later test to meet)."""
        for db in self.client.get_all_databases():
            if db.startswith(self.prefix):
                self.client.drop_database(db)
        for role in self.client.get_role_names():
            if role.startswith(self.role_prefix):
                self.client.drop_role(role)
        self.client.close()

    # -- the proof -------------------------------------------------------------------

    def objects(self) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = []
        for db in sorted(self.client.get_all_databases()):
            if db.startswith(self.prefix):
                out.append((db, None))
                out += [(db, t) for t in sorted(self.client.get_all_tables(db))]
        return out

    def probe(self) -> Probe:
        return Probe(self).run()


@dataclass
class Probe:
    """Each user's privilege set on each object against the evaluator, privilege by privilege."""

    world: World
    checks: int = 0
    mismatches: list[str] = field(default_factory=list)

    def run(self) -> Probe:
        model = self.world.model
        evaluator = Evaluator(model)
        groups = {u: sorted(g for g, members in model.groups.items() if u in members) for u in model.users}
        for db, table in self.world.objects():
            obj = HiveObject.database(db) if table is None else HiveObject.of_table(db, table)
            for user in sorted(model.users):
                held = self.world.client.get_privilege_set(obj, user, groups[user]).all
                self._compare(evaluator, user, db, table, {p.upper() for p in held})
        return self

    def _compare(self, ev: Evaluator, user: str, db: str, table: str | None, held: set[str]) -> None:
        if table is None:
            ref = ObjectRef.of("table", (CATALOG, db, "\x00new"))
            self._check(user, f"{CREATE} on {db}", CREATE in held, _allowed(ev, user, "create_table", ref))
            return
        ref = ObjectRef.of("table", (CATALOG, db, table))
        for privilege in (*sorted(IMPLIED_BY_ALL), ALL):
            has = privilege in held or (privilege in IMPLIED_BY_ALL and ALL in held)
            self._check(
                user, f"{privilege} on {db}.{table}", has, _allowed(ev, user, OPERATION_OF[privilege], ref)
            )

    def _check(self, user: str, what: str, held: bool, allowed: bool) -> None:
        self.checks += 1
        if held != allowed:
            verdict = "holds" if held else "lacks"
            self.mismatches.append(
                f"{user} {verdict} {what}; the evaluator {'allows' if allowed else 'denies'} it"
            )


def _allowed(ev: Evaluator, user: str, operation: str, ref: ObjectRef) -> bool:
    return ev.authorize(user, operation, ref, explain=False).allowed
