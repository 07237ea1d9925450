"""The Hive backend in the hostile environment (:mod:`tests.adversary`), against the real
metastore.

Each history draws a name mapping (:data:`tests.adversary.MAPPINGS`), whether the
backend owns grants by other hands (``manage_foreign_grants``), and up to three steps:
grants, DENYs and owners on registered objects and on unregistered ones (new names,
capitalised names, case twins of a table and of a database), removals and returns of
users, the group and roles, tables created and dropped in the model and on the
metastore, tables created on the metastore only (``outside``), and hand-made state
(``hand``, :data:`HAND`). After every scoped sync and after the full sync that follows,
``get_privilege_set`` is asked for every user of the pool (removed ones included) through
the name the user maps to, on every database and table of the world, and compared with
the evaluator: never wider.

- A hand step's scope is what it touched (the object, or the role), as a report of it
  would say; the full sync after it must clean it up whatever the scope was.
- Grants by other grantors are left alone by design unless the backend owns them
  (``manage_foreign_grants = true``; otherwise they are findings, tested elsewhere):
  those kinds of hand-made state are played only in histories where it does.
- A metastore name that several pool users map to (the ``collide`` mapping, or a
  removed user whose name a current one maps to) stands for the current users that map
  to it: what the evaluator decides for it is what all of them are allowed, and nothing
  when none is left in the model.
- External group resolution is not applicable: the backend never grants to a group
  (groups are expanded to their members), so the probe asks every user as a member of
  group ``g`` whatever the model says, and a group grant or a managed role held by a
  group, made by hand, must not survive a sync.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_hive.client import Grant, HiveObject, PrincipalType
from pushdown_hive.mapping import ALL, CREATE, IMPLIED_BY_ALL, OPERATION_OF
from tests.adversary import MAPPINGS, Tally, compare, histories, hostile_steps, mapping_names, model_changes

from .world import CATALOG, World, do

pytestmark = pytest.mark.hive

#: the pool; u3 (U3's case twin) and R1 (r1's) only come in through add_user / create_role
USERS = ("u1", "u2", "U3", "u3")
ROLES = ("r1", "r2", "R1")
SCHEMAS = ("s1", "s2")
TABLES = ("a", "b", "Secret")
OBJECTS = ("catalog c", "schema s1", "schema s2", "table s1.a", "table s2.b")
#: never registered: a new name, capitalised names, case twins of a table and a database
UNREGISTERED = ("table s1.Secret", "table s1.A", "table s2.zz", "schema S1", "table s1.secret")
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE")
#: another grantor's name (hand-made grants outside the fence)
OTHER = "etl_admin"
GROUP = "g"


#: the tables every history starts from, per schema (on the metastore and in the model)
BASE = {"s1": {"a"}, "s2": {"b"}}
_runs = itertools.count()


class Stage:
    """The databases every history of the test plays in, made once: a history starts
    with :meth:`reset` (the base tables only, no grant on them, none of the roles of
    earlier histories) and has its own grantor and role prefix."""

    def __init__(self, hms: Any) -> None:
        self.hms = hms
        self.world = World(hms)
        for schema, tables in BASE.items():
            self.world.client.create_database(self.world.db(schema))
            for table in sorted(tables):
                self.world.client.create_table(self.world.db(schema), table, owner="etl")

    def reset(self) -> None:
        c = self.world.client
        for schema, base in BASE.items():
            db = self.world.db(schema)
            held = set(c.get_all_tables(db))
            for table in sorted(held - base):
                c.drop_table(db, table)
            for table in sorted(base - held):
                c.create_table(db, table, owner="etl")
            objects = [HiveObject.database(db), *(HiveObject.of_table(db, t) for t in sorted(base))]
            c.revoke_privileges([g for obj in objects for g in c.list_privileges(obj)])
        for role in c.get_role_names():
            if role.startswith((self.world.role_prefix, "hand_" + self.world.prefix)):
                c.drop_role(role)

    def close(self) -> None:
        self.world.cleanup()


class Run:
    """One history: a fresh model over the stage's databases, its backend, the mapping
    and whether the backend owns foreign grants."""

    def __init__(self, stage: Stage, mapping: str, own: bool) -> None:
        n = next(_runs)
        self.world = World(
            stage.hms,
            prefix=stage.world.prefix,
            role_prefix=f"{stage.world.role_prefix}{n}_",
            grantor=f"{stage.world.grantor}_{n}",
        )
        self.mapping = mapping
        self.naming: Callable[[Principal], str] = MAPPINGS[mapping]
        self.own = own
        self.roles = True
        self.settings: dict[str, Any] = {"manage_foreign_grants": own}
        self.hive = self.world.backend(self.naming, **self.settings)
        #: (pool user, metastore name) for every name a user has had in this history
        self.seen: set[tuple[str, str]] = set()
        self.hand_role = f"hand_{self.world.prefix}{n}"

    def name(self, user: str) -> str:
        return self.naming(Principal.user(user))

    def ref(self, text: str) -> ObjectRef:
        kind, _, name = text.partition(" ")
        if kind == "catalog":
            return ObjectRef.parse(text)
        parts = name.split(".")
        return ObjectRef.of(kind, (CATALOG, self.world.db(parts[0]), *parts[1:]))

    def table(self, schema: str, table: str) -> HiveObject:
        return HiveObject.of_table(self.world.db(schema), table.lower())

    def start(self) -> None:
        w = self.world
        for user in USERS[:3]:
            w.user(user)
        do(w.model, ch.add_group(w.model, GROUP, ["u1"]))
        for schema, tables in BASE.items():
            do(w.model, ch.create_object(w.model, self.ref(f"schema {schema}")))
            for table in sorted(tables):
                do(w.model, ch.create_object(w.model, self.ref(f"table {schema}.{table}")))
        gate = ("catalog c", "USE_CATALOG", "ALLOW")
        s1 = f"schema c.{w.db('s1')}"
        w.role("r1", [gate, (s1, "USE_SCHEMA", "ALLOW"), (s1, "SELECT_TABLE", "ALLOW")], to=["u2"])
        do(w.model, ch.grant_role(w.model, "r1", Principal.group(GROUP)))
        w.role("r2", [gate, ("catalog c", "USE_SCHEMA", "ALLOW")], to=["U3"])
        reconcile(self.hive, w.model, Scope.everything())

    # -- steps ----------------------------------------------------------------------

    def step(self, step: tuple[Any, ...]) -> Scope | None:
        """Play one step; the scope it touched (``None``: nothing happened)."""
        kind = step[0]
        if kind == "hand":
            return self.hand(step[1])
        if kind in ("create", "drop", "outside"):
            return self.table_step(*step)
        try:
            events = model_changes(self.world.model, step, self.ref)
        except ModelError:
            return None
        do(self.world.model, events)
        return Scope.union(scope_of(e) for e in events) if events else None

    def table_step(self, kind: str, schema: str, table: str) -> Scope | None:
        w, obj = self.world, self.ref(f"table {schema}.{table}")
        db, name = w.db(schema), table.lower()
        there = w.client.table_exists(db, name)
        if kind == "drop":
            if obj not in w.model.objects:
                return None
            do(w.model, ch.drop_object(w.model, obj))
            if there:
                w.client.drop_table(db, name)
            return Scope.of([obj])
        if not there:
            w.client.create_table(db, name, owner="etl")
        if kind == "create" and obj not in w.model.objects:
            do(w.model, ch.create_object(w.model, obj))
        return Scope.of([obj])

    def hand(self, i: int) -> Scope | None:
        """The i-th kind of hand-made state (:data:`HAND`), played on the metastore."""
        return HAND[i](self)

    def grant(self, obj: HiveObject, who: str, kind: PrincipalType, privilege: str, grantor: str) -> bool:
        try:
            self.world.client.grant_privileges([Grant(obj, who, kind, privilege, grantor=grantor)])
        except Exception:  # already held (by any grantor): the hand-made state is there anyway
            return False
        return True

    # -- the probe ------------------------------------------------------------------

    def check(self, tally: Tally, notes: list[str]) -> list[Any]:
        """Every pool user through every name it has had in this history (the mapping may
        have changed underneath) against what the current users of that name may do."""
        w = self.world
        evaluator = Evaluator(w.model)
        self.seen |= {(u, self.name(u)) for u in USERS}
        now = {u: self.name(u) for u in USERS if u in w.model.users}
        live = {n: [u for u, m in now.items() if m == n] for _, n in self.seen}
        server: set[tuple[str, str, str]] = set()
        decided: set[tuple[str, str, str]] = set()
        checks = 0
        for db, table in w.objects():
            obj = HiveObject.database(db) if table is None else HiveObject.of_table(db, table)
            where = db if table is None else f"{db}.{table}"
            allowed = {n: _allowed(evaluator, us, db, table) for n, us in live.items()}
            held = {n: {p.upper() for p in w.client.get_privilege_set(obj, n, [GROUP]).all} for n in live}
            for user, name in sorted(self.seen):
                for privilege in (CREATE,) if table is None else (*sorted(IMPLIED_BY_ALL), ALL):
                    checks += 1
                    if privilege in held[name] or (privilege in IMPLIED_BY_ALL and ALL in held[name]):
                        server.add((user, privilege, where))
                    if privilege in allowed[name]:
                        decided.add((user, privilege, where))
        wider, narrower = compare(server, decided)
        tally.record(checks, wider, narrower, notes, self.name)
        return wider

    def close(self) -> None:
        self.hive.close()
        self.world.client.close()


def _allowed(ev: Evaluator, users: list[str], db: str, table: str | None) -> set[str]:
    """The privileges every one of ``users`` is allowed on the object (none for no user)."""
    if not users:
        return set()
    if table is None:
        ref = ObjectRef.of("table", (CATALOG, db, "\x00new"))
        pairs = [(CREATE, "create_table")]
    else:
        ref = ObjectRef.of("table", (CATALOG, db, table))
        pairs = [(p, OPERATION_OF[p]) for p in (*sorted(IMPLIED_BY_ALL), ALL)]
    return {p for p, op in pairs if all(ev.authorize(u, op, ref, explain=False).allowed for u in users)}


# -- Hive's hand-made state: each returns the scope it touched ---------------------------


def _ours_to_user(run: Run) -> Scope | None:
    """pushdown's grantor, by hand: ALL on s1.a to u2 (whatever the model says)."""
    run.grant(run.table("s1", "a"), run.name("u2"), PrincipalType.USER, ALL, run.world.grantor)
    return Scope.of([run.ref("table s1.a")])


def _ours_to_unmapped(run: Run) -> Scope | None:
    """pushdown's grantor, by hand: ALL on s2.b to U3's model name (not its mapped one)."""
    run.grant(run.table("s2", "b"), "U3", PrincipalType.USER, ALL, run.world.grantor)
    return Scope.of([run.ref("table s2.b")])


def _others_to_user(run: Run) -> Scope | None:
    """Another grantor: SELECT on s1.a to u1 (played only when the backend owns it)."""
    if not run.own:
        return None
    run.grant(run.table("s1", "a"), run.name("u1"), PrincipalType.USER, "SELECT", OTHER)
    return Scope.of([run.ref("table s1.a")])


def _nested_role(run: Run) -> Scope | None:
    """A hand-made role carrying ALL on s1.a, granted to the managed role of r1."""
    c, managed = run.world.client, run.world.role_name("r1")
    if managed not in c.get_role_names():
        return None
    if run.hand_role not in c.get_role_names():
        c.create_role(run.hand_role)
        run.grant(run.table("s1", "a"), run.hand_role, PrincipalType.ROLE, ALL, OTHER)
    try:
        c.grant_role(run.hand_role, managed, PrincipalType.ROLE)
    except Exception:  # already nested
        return None
    return Scope.of(principals={Principal.role("r1")})


def _managed_role_to_group(run: Run) -> Scope | None:
    """The managed role of r2 granted to group g by hand."""
    c, managed = run.world.client, run.world.role_name("r2")
    if managed not in c.get_role_names():
        return None
    try:
        c.grant_role(managed, GROUP, PrincipalType.GROUP)
    except Exception:  # already held
        return None
    return Scope.of(principals={Principal.role("r2")})


def _ours_to_public(run: Run) -> Scope | None:
    """pushdown's grantor, by hand: SELECT on s2.b to everyone (role public)."""
    run.grant(run.table("s2", "b"), "public", PrincipalType.ROLE, "SELECT", run.world.grantor)
    return Scope.of([run.ref("table s2.b")])


def _others_to_public(run: Run) -> Scope | None:
    """Another grantor: SELECT on s1.a to everyone (only when the backend owns it)."""
    if not run.own:
        return None
    run.grant(run.table("s1", "a"), "public", PrincipalType.ROLE, "SELECT", OTHER)
    return Scope.of([run.ref("table s1.a")])


def _ours_to_group(run: Run) -> Scope | None:
    """pushdown's grantor, by hand: INSERT on s1.a to group g."""
    run.grant(run.table("s1", "a"), GROUP, PrincipalType.GROUP, "INSERT", run.world.grantor)
    return Scope.of([run.ref("table s1.a")])


def _prefixed_role(run: Run) -> Scope | None:
    """A role with the managed prefix that no model role stands for, carrying ALL on
    s2.b, granted to U3's mapped name."""
    c, ghost = run.world.client, run.world.role_name("ghost")
    if ghost not in c.get_role_names():
        c.create_role(ghost)
        run.grant(run.table("s2", "b"), ghost, PrincipalType.ROLE, ALL, OTHER)
        c.grant_role(ghost, run.name("U3"), PrincipalType.USER)
    return Scope.of(principals={Principal.user("U3")})


def _ours_with_option(run: Run) -> Scope | None:
    """pushdown's grantor, by hand, with grant option: ALL on s2.b to u1."""
    obj = run.table("s2", "b")
    grant = Grant(obj, run.name("u1"), PrincipalType.USER, ALL, grantor=run.world.grantor, grant_option=True)
    try:
        run.world.client.grant_privileges([grant])
    except Exception:  # already held
        return None
    return Scope.of([run.ref("table s2.b")])


def _managed_role_to_user(run: Run) -> Scope | None:
    """The managed role of r2 granted by hand to u1 (whatever the model says)."""
    c, managed = run.world.client, run.world.role_name("r2")
    if managed not in c.get_role_names():
        return None
    try:
        c.grant_role(managed, run.name("u1"), PrincipalType.USER)
    except Exception:  # already held
        return None
    return Scope.of(principals={Principal.role("r2")})


def _reconfigured(run: Run, **settings: Any) -> Scope | None:
    """The configuration changes underneath: a new backend with ``settings``; the next
    sync is one of u2's (any scope: the configuration is read by every sync)."""
    run.settings.update(settings)
    run.hive.close()
    run.hive = run.world.backend(run.naming, **run.settings)
    return Scope.of(principals={Principal.user("u2")})


def _roles_setting_flipped(run: Run) -> Scope | None:
    """``roles`` turned off (or on again)."""
    return _reconfigured(run, roles=not run.settings.get("roles", True))


def _role_prefix_changed(run: Run) -> Scope | None:
    """``role_prefix`` changed: the roles of the old prefix are outside the fence now."""
    return _reconfigured(run, role_prefix=run.settings.get("role_prefix", run.world.role_prefix) + "v_")


def _mapping_changed(run: Run) -> Scope | None:
    """``pushdown_map_principal`` answers differently from now on (the next mapping)."""
    run.seen |= {(u, run.name(u)) for u in USERS}
    order = sorted(MAPPINGS)
    run.naming = MAPPINGS[order[(order.index(run.mapping) + 1) % len(order)]]
    run.mapping = order[(order.index(run.mapping) + 1) % len(order)]
    return _reconfigured(run)


def _hand_role_to_user(run: Run) -> Scope | None:
    """A hand-made role (no managed prefix) carrying SELECT on s2.b, granted to u2 (only
    when the backend owns grants by other hands)."""
    if not run.own:
        return None
    c, role = run.world.client, run.hand_role + "_b"
    if role not in c.get_role_names():
        c.create_role(role)
        run.grant(run.table("s2", "b"), role, PrincipalType.ROLE, "SELECT", OTHER)
        c.grant_role(role, run.name("u2"), PrincipalType.USER)
    return Scope.of([run.ref("table s2.b")])


HAND: tuple[Callable[[Run], Scope | None], ...] = (
    _ours_to_user,
    _ours_to_unmapped,
    _others_to_user,
    _nested_role,
    _managed_role_to_group,
    _ours_to_public,
    _others_to_public,
    _ours_to_group,
    _prefixed_role,
    _ours_with_option,
    _managed_role_to_user,
    _roles_setting_flipped,
    _hand_role_to_user,
    _role_prefix_changed,
    _mapping_changed,
)


steps = hostile_steps(
    roles=ROLES,
    users=USERS,
    objects=OBJECTS,
    unregistered=UNREGISTERED,
    privileges=PRIVILEGES,
    schemas=SCHEMAS,
    tables=TABLES,
    hand=len(HAND),
)


def test_the_hive_backend_is_never_wider_than_the_evaluator(hive_metastore: Any, capsys: Any) -> None:
    tally = Tally()
    examples: list[Any] = []
    stage = Stage(hive_metastore)

    @settings(
        max_examples=histories(300),
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        mapping=mapping_names,
        own=st.booleans(),
        history=st.lists(steps, min_size=2, max_size=5),
    )
    def run(mapping: str, own: bool, history: list[tuple[Any, ...]]) -> None:
        stage.reset()
        r = Run(stage, mapping, own)
        try:
            r.start()
            tally.histories += 1
            notes: list[str] = []
            for step in history:
                scope = r.step(step)
                if scope is None:
                    continue
                for sync in (scope, Scope.everything()):
                    plan, _ = reconcile(r.hive, r.world.model, sync)
                    # a narrower answer an earlier plan explained stays explained
                    notes = [*notes, *plan.notes, *plan.findings]
                    wider = r.check(tally, notes)
                    if wider:
                        examples.append((mapping, own, history, step, sync.describe(), wider))
                    assert wider == [], examples[-1]
        finally:
            r.close()

    try:
        run()
    finally:
        stage.reset()
        stage.close()
    with capsys.disabled():
        print("\n" + tally.line("hive"))
    assert tally.wider == 0 and tally.checks > 0
