"""The Gravitino source's adversary draws from the source's surface table
(pushdown.app.source.surface.SURFACE): every privilege name (held, unheld, unknown),
condition (ALLOW, DENY, others) and securable type (placed or not) is a draw, in roles
held by users and groups. Each read is either refused, or becomes a model that is never
wider than what the read says:

- every DENY of the read is in the model, as it is or as a DENY that covers it;
- every ALLOW of the model is an ALLOW of the read;
- the model decides nothing the read's own known part (the grants pushdown can hold,
  DENYs included) does not allow; what it decides narrower carries a note.

``PUSHDOWN_ADVERSARY_HISTORIES`` sets the number of reads (the slow run); CI plays 300.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from pushdown.app.source.gravitino import Snapshot, SourceUnreadable
from pushdown.app.source.surface import COVERED_BY, SURFACE
from pushdown.app.source.target import to_model
from pushdown.decide.evaluator import Evaluator
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from tests.adversary import HISTORIES_VARIABLE, Tally

from .conftest import follow_config

USERS, GROUPS, ROLES = ("u1", "u2", "u3"), ("g1",), ("r1", "r2", "r3")
TREE = frozenset({("schema", ("c", "db")), ("table", ("c", "db", "t0")), ("table", ("c", "db", "t1"))})
#: where each securable type is granted (a name of the tree, or one pushdown has not seen)
PLACES: dict[str, tuple[str, ...]] = {
    "metalake": ("test",),
    "catalog": ("c", "elsewhere"),
    "schema": ("c.db",),
    "table": ("c.db.t0", "c.db.t1", "c.db.gone"),
    "view": ("c.db.v",),
    "column": ("c.db.t0.id",),
    "function": ("c.db.f",),
}
OPS = ("load_table", "alter_table", "create_table", "load_schema", "load_catalog", "create_schema")


def _names(kind: str) -> list[str]:
    return [e.key.split(":", 1)[1] for e in SURFACE if e.key.startswith(f"{kind}:")]


PRIVILEGES = _names("privilege")
#: the types of the tree, drawn as often as all the others together
PLACED = ["metalake", "catalog", "schema", "table"]
TYPES = [t.lower() for t in _names("type")]


#: rows pushdown holds in full: the ground the surface's draws are mixed into
PLAIN = [
    ("catalog", "c", "SELECT_TABLE"),
    ("schema", "c.db", "SELECT_TABLE"),
    ("schema", "c.db", "MODIFY_TABLE"),
    ("schema", "c.db", "CREATE_TABLE"),
    ("table", "c.db.t0", "SELECT_TABLE"),
    ("table", "c.db.t1", "MODIFY_TABLE"),
    ("catalog", "c", "CREATE_SCHEMA"),
]


def _row(rng: random.Random, tally: Tally) -> tuple[str, str, str, str]:
    """A row of a role: mostly one pushdown holds, else a draw of the surface (about one
    role in four carries one)."""
    if rng.random() < 0.85:
        type_, full, name = rng.choice(PLAIN)
        return type_, full, name, rng.choice(["ALLOW", "DENY"])
    undrawn = [n for n in PRIVILEGES if f"privilege:{n}" not in tally.drawn]
    if undrawn and rng.random() < 0.5:  # every entry early on, then at random
        name = rng.choice(undrawn)
    else:
        name = rng.choice(PRIVILEGES + [*COVERED_BY] * 5)  # the one path that maps, not refuses
    if name.startswith("("):
        name = rng.choice(["SELECT_EVERYTHING", "DROP_ANYTHING", "READ_COLUMN"])
    key = f"privilege:{name}"
    tally.draw(key if key in KEYS else "privilege:(a name the client does not know)")
    cond = rng.choices(["ALLOW", "DENY", "MAYBE"], weights=[10, 10, 1])[0]
    tally.draw(f"condition:{cond}" if cond != "MAYBE" else "condition:(other)")
    undrawn_types = [t for t in TYPES if f"type:{t.upper()}" not in tally.drawn]
    if undrawn_types and rng.random() < 0.5:
        type_ = rng.choice(undrawn_types)
    else:
        type_ = rng.choice(TYPES) if rng.random() < 0.5 else rng.choice(PLACED)
    tally.draw(f"type:{type_.upper()}")
    full = rng.choice(PLACES.get(type_, ("c.db.x",)))
    return type_, full, name, cond


KEYS = {e.key for e in SURFACE}


def _read(rng: random.Random, tally: Tally) -> Snapshot:
    roles = {r: frozenset(_row(rng, tally) for _ in range(rng.randint(0, 3))) for r in ROLES}
    roles["base"] = frozenset(
        {("catalog", "c", "USE_CATALOG", "ALLOW"), ("catalog", "c", "USE_SCHEMA", "ALLOW")}
    )
    users = {u: frozenset(rng.sample(sorted(roles), rng.randint(0, 3))) for u in USERS}
    groups = {g: frozenset(rng.sample(sorted(roles), rng.randint(0, 2))) for g in GROUPS}
    return Snapshot(
        "test",
        users=users,
        groups=groups,
        roles=roles,
        catalogs={"c": ("relational", "demo")},
        tree=TREE,
    )


def _placed(model: Model, type_: str, full: str) -> ObjectRef | None:
    try:
        kind = SecurableType.parse(type_)
        return METALAKE if kind is SecurableType.METALAKE else ObjectRef(kind, tuple(full.split(".")))
    except ModelError:
        return None


def _held(name: str) -> str:
    try:
        return Privilege.parse(name).value
    except ModelError:
        return name


def _known(snap: Snapshot) -> Model:
    """The oracle: the read's grants pushdown can hold, ALLOW and DENY, nothing else."""
    model = Model(metalake="test")

    def do(events: list[Any]) -> None:
        for e in events:
            model.apply(e)

    for u in sorted(snap.users):
        do(ch.add_user(model, u))
    for g in sorted(snap.groups):
        do(ch.add_group(model, g, []))
    do(ch.create_object(model, ObjectRef(SecurableType.CATALOG, ("c",)), None, {"backend": "demo"}))
    for kind, names in sorted(snap.tree, key=lambda i: (len(i[1]), i)):
        do(ch.create_object(model, ObjectRef(SecurableType(kind), names)))
    for role, rows in sorted(snap.roles.items()):
        do(ch.create_role(model, role))
        for type_, full, name, cond in sorted(rows):
            obj = _placed(model, type_, full)
            try:
                do(ch.grant_privileges(model, role, obj, [Privilege.parse(name)], Condition.parse(cond)))
            except (ModelError, AttributeError, TypeError):
                continue
    for u, roles in sorted(snap.users.items()):
        for r in sorted(roles):
            do(ch.grant_role(model, r, Principal.user(u)))
    for g, roles in sorted(snap.groups.items()):
        for r in sorted(roles):
            do(ch.grant_role(model, r, Principal.group(g)))
    return model


def _decisions(model: Model) -> set[tuple[str, str, str]]:
    ev = Evaluator(model)
    return {
        (u, op, str(obj))
        for obj in model.objects
        for op in OPS
        if OPERATIONS[op].target == obj.type
        for u in USERS
        if ev.authorize(u, op, obj, explain=False).allowed
    }


def _dropped_denies(snap: Snapshot, model: Model) -> list[str]:
    held = {
        (g.object, g.privilege)
        for grants in model.roles.values()
        for g in grants
        if g.condition is Condition.DENY
    }
    out = []
    for role, rows in snap.roles.items():
        for type_, full, name, cond in rows:
            if cond != "DENY":
                continue
            obj = _placed(model, type_, full)
            try:
                privilege = Privilege.parse(name)
            except ModelError:
                privilege = COVERED_BY.get(name)  # type: ignore[assignment]
            if obj is None or privilege is None or (obj, privilege) not in held:
                out.append(f"role {role}: DENY {name} on {type_} {full}")
    return out


def _invented_allows(snap: Snapshot, model: Model) -> list[str]:
    said = set()
    for rows in snap.roles.values():
        for type_, full, name, cond in rows:
            obj = _placed(model, type_, full)
            if cond == "ALLOW" and obj is not None:
                said.add((obj, _held(name)))
    return [
        str(g)
        for grants in model.roles.values()
        for g in grants
        if g.condition is Condition.ALLOW and (g.object, g.privilege.value) not in said
    ]


def test_the_source_adversary_draws_from_the_surface_and_never_widens(tmp_path: Path) -> None:
    config = follow_config(tmp_path, "http://127.0.0.1:1")
    assert config.follow is not None
    histories = int(os.environ.get(HISTORIES_VARIABLE) or 300)
    tally = Tally(surface=len(SURFACE))
    refused = 0
    for i in range(histories):
        rng = random.Random(20261126 + i)
        snap = _read(rng, tally)
        tally.histories += 1
        try:
            built = to_model(snap, config.follow, config.backends)
        except SourceUnreadable:
            refused += 1
            continue
        model = built.model
        wrong = _dropped_denies(snap, model) + _invented_allows(snap, model)
        assert wrong == [], (i, wrong)
        got, oracle = _decisions(model), _decisions(_known(snap))
        wider = sorted(got - oracle)
        narrower = sorted(oracle - got)
        # the only narrowing: a DENY enforced wider than it reads, which a note says
        covered = [n for n in built.notes if "enforced as deny" in n.lower()]
        tally.record(len(oracle | got), wider, narrower, ())
        assert not narrower or covered, (i, narrower[:3])
        tally.narrower_with_note += len(narrower)  # each explained by the note of the wider DENY
    print(tally.line("gravitino source") + f", {refused} reads refused")
    assert tally.wider == 0, tally.examples
    assert refused and refused < histories  # both outcomes were drawn
    assert tally.drawn == KEYS, sorted(KEYS - tally.drawn)  # every entry of the table drawn
