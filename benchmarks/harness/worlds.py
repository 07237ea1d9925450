"""A synthetic estate of any size, as plain data first, then as a :class:`Model`.

At ``--scale 1``: 10 catalogs x 100 schemas x 100 tables (100,000 tables), 1,000 roles,
10,000 users in 300 groups (1-3 groups each), ALLOW grants at every level with ~10% DENY,
roles granted to users (0-3 each) and to groups (2-4 each), and an owner for every object
(the metalake, each catalog, schema, table and role). Schemas and tables per level grow
with the square root of the scale, roles, users and groups linearly. The same seed gives
the same estate.

``make_world(scale)`` gives the model and handles on it; :func:`pick_small_role` a role
held by about N users, for a change whose scope is small.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pushdown.model import changes
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

from .cli import DEFAULT_SEED

P = Privilege
T = SecurableType
ALLOW, DENY = Condition.ALLOW, Condition.DENY
Owned = list[tuple[tuple[str, ...], str]]  # (name segments, owner)


@dataclass(frozen=True)
class Config:
    catalogs: int
    schemas: int  # per catalog
    tables: int  # per schema
    roles: int
    users: int
    groups: int
    seed: int = DEFAULT_SEED
    #: chance that one generated grant request is a DENY; DENY requests carry one privilege
    #: and ALLOW requests 1-3, so 0.14 gives ~10% DENY among (role, object, privilege) grants
    deny_request_share: float = 0.14


def config_for(scale: float = 1.0, seed: int = DEFAULT_SEED, **sizes: int | None) -> Config:
    """The estate at ``scale``; any size given in ``sizes`` (and not None) overrides it."""
    side = max(1, round(100 * math.sqrt(scale)))
    default = {
        "catalogs": 10,
        "schemas": side,
        "tables": side,
        "roles": max(5, round(1000 * scale)),
        "users": max(20, round(10000 * scale)),
        "groups": max(3, round(300 * scale)),
    }
    for key, value in sizes.items():
        if key not in default:
            raise TypeError(f"unknown size {key!r}; known: {', '.join(default)}")
        if value is not None:
            default[key] = value
    return Config(seed=seed, **default)


@dataclass
class Plan:
    """The whole synthetic model as plain data, built before anything is timed."""

    users: list[str]
    groups: dict[str, list[str]]  # group -> members
    catalogs: Owned
    schemas: Owned
    tables: Owned
    metalake_owner: str
    roles: list[str]
    grants: list[tuple[str, tuple[str, ...], frozenset[Privilege], Condition]] = field(default_factory=list)
    user_roles: list[tuple[str, str]] = field(default_factory=list)  # (role, user)
    group_roles: list[tuple[str, str]] = field(default_factory=list)  # (role, group)
    role_owners: dict[str, str] = field(default_factory=dict)

    @property
    def events(self) -> int:
        """How many events build the model."""
        return (
            len(self.users)
            + len(self.groups)
            + sum(len(m) for m in self.groups.values())
            + len(self.catalogs) + len(self.schemas) + len(self.tables)
            + 1
            + len(self.roles) + len(self.role_owners)
            + len(self.grants) + len(self.user_roles) + len(self.group_roles)
        )  # fmt: skip


def make_plan(cfg: Config) -> Plan:
    rng = random.Random(cfg.seed)
    users = [f"user{i:05d}" for i in range(cfg.users)]
    group_names = [f"group{i:03d}" for i in range(cfg.groups)]
    groups: dict[str, list[str]] = {g: [] for g in group_names}
    for user in users:  # every user is in 1-3 groups (2 on average)
        for g in rng.sample(group_names, min(len(group_names), rng.randint(1, 3))):
            groups[g].append(user)
    cats = [f"cat{i:02d}" for i in range(cfg.catalogs)]
    catalogs: Owned = [((c,), rng.choice(users)) for c in cats]
    schemas: Owned = [((c, f"sch{j:03d}"), rng.choice(users)) for c in cats for j in range(cfg.schemas)]
    tables: Owned = [
        ((*names, f"tbl{k:04d}"), rng.choice(users)) for names, _ in schemas for k in range(cfg.tables)
    ]
    roles = [f"role{i:04d}" for i in range(cfg.roles)]
    plan = Plan(users, groups, catalogs, schemas, tables, users[0], roles)
    plan.grants = _grants(cfg, rng, cats, roles)
    for user in users:  # 0-3 roles granted directly (1.5 on average)
        for role in rng.sample(roles, min(len(roles), rng.randint(0, 3))):
            plan.user_roles.append((role, user))
    for g in group_names:  # 2-4 roles per group (3 on average)
        for role in rng.sample(roles, min(len(roles), rng.randint(2, 4))):
            plan.group_roles.append((role, g))
    plan.role_owners = {role: rng.choice(users) for role in roles}
    return plan


def _grants(
    cfg: Config, rng: random.Random, cats: list[str], roles: list[str]
) -> list[tuple[str, tuple[str, ...], frozenset[Privilege], Condition]]:
    """Each role: maybe the metalake, its home catalog (and maybe another), 5 schemas, 25 tables."""
    merged: dict[tuple[str, tuple[str, ...], Condition], set[Privilege]] = {}

    def grant(role: str, names: tuple[str, ...], allow: Iterable[Privilege], deny: list[Privilege]) -> None:
        if rng.random() < cfg.deny_request_share:
            cond, privs = DENY, {rng.choice(deny)}
        else:
            cond, privs = ALLOW, set(allow)
        merged.setdefault((role, names, cond), set()).update(privs)

    n_schema_grants = min(5, cfg.schemas)
    n_table_grants = min(25, cfg.schemas * cfg.tables)
    for role in roles:
        home = rng.randrange(cfg.catalogs)
        if rng.random() < 0.02:
            grant(role, (), (P.USE_CATALOG, P.USE_SCHEMA, P.SELECT_TABLE), [P.MODIFY_TABLE, P.CREATE_TABLE])
        cat_ids = {home} | ({rng.randrange(cfg.catalogs)} if rng.random() < 0.3 else set())
        for c in sorted(cat_ids):
            extra = rng.sample(
                [P.USE_SCHEMA, P.SELECT_TABLE, P.CREATE_SCHEMA, P.CREATE_TABLE, P.MODIFY_TABLE],
                rng.randint(0, 2),
            )
            grant(
                role,
                (cats[c],),
                (P.USE_CATALOG, *extra),
                [P.USE_CATALOG, P.USE_SCHEMA, P.SELECT_TABLE, P.MODIFY_TABLE, P.CREATE_TABLE],
            )
        my_schemas = rng.sample(range(cfg.schemas), n_schema_grants)
        for s in my_schemas:
            extra = rng.sample([P.SELECT_TABLE, P.CREATE_TABLE, P.MODIFY_TABLE], rng.randint(0, 2))
            grant(
                role,
                (cats[home], f"sch{s:03d}"),
                (P.USE_SCHEMA, *extra),
                [P.USE_SCHEMA, P.SELECT_TABLE, P.MODIFY_TABLE],
            )
        for _ in range(n_table_grants):
            s = rng.choice(my_schemas) if rng.random() < 0.8 else rng.randrange(cfg.schemas)
            names = (cats[home], f"sch{s:03d}", f"tbl{rng.randrange(cfg.tables):04d}")
            allow = rng.choice(((P.SELECT_TABLE,), (P.SELECT_TABLE, P.MODIFY_TABLE), (P.MODIFY_TABLE,)))
            grant(role, names, allow, [P.SELECT_TABLE, P.MODIFY_TABLE])
    return [(r, names, frozenset(privs), cond) for (r, names, cond), privs in merged.items()]


_LEVELS = ((T.CATALOG, "catalogs"), (T.SCHEMA, "schemas"), (T.TABLE, "tables"))


def build_from_events(plan: Plan) -> Model:
    """Build the model from events constructed here, applied without validation."""
    model = Model()
    apply = model.apply
    for user in plan.users:
        apply(ev.UserAdded(user))
    for group, members in plan.groups.items():
        apply(ev.GroupAdded(group))
        for user in sorted(members):
            apply(ev.GroupMemberAdded(group, user))
    refs: dict[tuple[str, ...], ObjectRef] = {(): METALAKE}
    backend = (("backend", "hive"),)
    for kind, level in _LEVELS:
        for names, owner in getattr(plan, level):
            ref = refs[names] = ObjectRef(kind, names)
            apply(ev.ObjectCreated(ref, backend if kind is T.CATALOG else (), owner))
    apply(ev.OwnerSet(METALAKE, plan.metalake_owner, None))
    for role in plan.roles:
        apply(ev.RoleCreated(role))
        if role in plan.role_owners:
            apply(ev.OwnerSet(ObjectRef(T.ROLE, (role,)), plan.role_owners[role], None))
    for role, names, privs, cond in plan.grants:
        apply(ev.PrivilegesGranted(role, refs[names], privs, cond))
    for role, user in plan.user_roles:
        apply(ev.RoleGranted(role, Principal.user(user)))
    for role, group in plan.group_roles:
        apply(ev.RoleGranted(role, Principal.group(group)))
    return model


def build_validated(plan: Plan) -> Model:
    """Build the same model through :mod:`pushdown.model.changes` (every request validated)."""
    model = Model()

    def do(events: list[ev.Event]) -> None:
        for e in events:
            model.apply(e)

    for user in plan.users:
        do(changes.add_user(model, user))
    for group, members in plan.groups.items():
        do(changes.add_group(model, group, members))
    refs: dict[tuple[str, ...], ObjectRef] = {(): METALAKE}
    for kind, level in _LEVELS:
        for names, owner in getattr(plan, level):
            ref = refs[names] = ObjectRef(kind, names)
            do(changes.create_object(model, ref, owner, {"backend": "hive"} if kind is T.CATALOG else None))
    do(changes.set_owner(model, METALAKE, plan.metalake_owner))
    for role in plan.roles:
        do(changes.create_role(model, role, plan.role_owners.get(role)))
    for role, names, privs, cond in plan.grants:
        do(changes.grant_privileges(model, role, refs[names], privs, cond))
    for role, user in plan.user_roles:
        do(changes.grant_role(model, role, Principal.user(user)))
    for role, group in plan.group_roles:
        do(changes.grant_role(model, role, Principal.group(group)))
    return model


def same_model(a: Model, b: Model) -> bool:
    """The facts of two models agree (users, groups, roles, grants, holders, owners, objects)."""
    facts = ("users", "groups", "roles", "owners", "objects", "by_object")
    assignments = ("user_roles", "group_roles", "user_groups")  # defaultdicts: empty sets do not count
    return all(getattr(a, f) == getattr(b, f) for f in facts) and all(
        _nonempty(getattr(a, f)) == _nonempty(getattr(b, f)) for f in assignments
    )


def _nonempty(index: dict[str, set[str]]) -> dict[str, set[str]]:
    return {k: v for k, v in index.items() if v}


# -- handles on a built model -------------------------------------------------------------


def tables_of(model: Model) -> list[ObjectRef]:
    """Every registered table, the model's own ObjectRef instances, in name order."""
    return sorted(o for o in model.objects if o.type is T.TABLE)


def pick_small_role(model: Model, holders: int = 10) -> str:
    """The role whose holders (directly or through a group) number closest to ``holders``."""
    return min(sorted(model.roles), key=lambda role: abs(len(model.holders_of(role)) - holders))


def pick_table(model: Model, seed: int = DEFAULT_SEED) -> ObjectRef:
    """One registered table, chosen by ``seed``."""
    return random.Random(seed).choice(tables_of(model))


@dataclass
class World:
    """A built estate: its configuration, its plan (plain data) and its model."""

    config: Config
    plan: Plan
    model: Model

    @cached_property
    def tables(self) -> list[ObjectRef]:
        return tables_of(self.model)

    @cached_property
    def users(self) -> list[str]:
        return sorted(self.model.users)

    def small_role(self, holders: int = 10) -> str:
        return pick_small_role(self.model, holders)

    def table(self, seed: int | None = None) -> ObjectRef:
        return pick_table(self.model, self.config.seed if seed is None else seed)


def make_world(
    scale: float = 1.0, seed: int = DEFAULT_SEED, *, validated: bool = False, **sizes: int | None
) -> World:
    """The estate at ``scale`` as a :class:`World` (built through ``changes`` if ``validated``)."""
    cfg = config_for(scale, seed, **sizes)
    plan = make_plan(cfg)
    return World(cfg, plan, build_validated(plan) if validated else build_from_events(plan))


class OneChange:
    """Changes built one after another on a scratch copy of a model, kept as one list of
    events: an estate committed as a single change (one transaction)."""

    def __init__(self, model: Model) -> None:
        self.scratch = copy.deepcopy(model)
        self.events: list[ev.Event] = []

    def __call__(self, fn: Callable[..., list[ev.Event]], *args: Any) -> None:
        events = fn(self.scratch, *args)
        for e in events:
            self.scratch.apply(e)
        self.events.extend(events)
