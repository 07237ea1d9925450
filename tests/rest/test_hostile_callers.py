"""Hostile callers against every route (issue 24): escalations and leaks, counted.

For random estates (catalogs, schemas, leaves and roles named from a hostile alphabet;
a creator, a holder, a DENY holder, an object owner, a user with nothing, an outsider and
the anonymous caller), every route in :data:`ROUTES` is called by every kind of caller
with existing, missing and hostile names. After each request:

- **escalation**: the store moved although the requirement table, read on the model before
  the request, did not allow every check the request names; or what another principal may
  do (the evaluator's answer for every user, object and operation) changed beyond the
  principals the request was allowed to affect;
- **leak**: a twin estate is built without one object (and what lies below it); a caller
  refused on a route that names it must get the very same bytes from the twin.

The counts are printed (``requests, escalations, leaks``); both must be 0. CI draws a few
estates (``PUSHDOWN_HOSTILE_ESTATES``, default 3; e.g. 40 for a longer run).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pushdown.app.rest.routes import LOAD_OBJECT, ROUTES, Route
from pushdown.app.service import AccessControl
from pushdown.decide.evaluator import Evaluator, Target
from pushdown.decide.requirements import LOAD_OPERATION
from pushdown.errors import PushdownError
from pushdown.model.principals import Principal
from pushdown.model.privileges import Privilege
from pushdown.model.securables import DATA_TYPES, METALAKE, ObjectRef
from pushdown.model.securables import SecurableType as T
from pushdown.model.state import Model

from .asgi import Answer, Door, segment

ESTATES = int(os.environ.get("PUSHDOWN_HOSTILE_ESTATES", "3"))
M = "/api/metalakes/test"
ALPHABET = ["a", "b", ".", "`", '"', "'", "/", "%", " ", "é", "字", "😀", "\\", "*", "#", "?", "-", "x"]
USERS = ("alice", "bob", "carol", "dave", "eve")
#: the kinds of caller: the service admin owns the metalake; the rest are drawn per estate
CALLERS = ("admin", "alice", "bob", "carol", "dave", "eve", "mallory", None)
LEAF = {T.TABLE: "tables", T.TOPIC: "topics", T.FILESET: "filesets"}
TEAM, CAROL = Principal.group("team"), Principal.user("carol")


def hostile(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return "r" * rng.randint(200, 600)
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 8)))
    return text if text.strip() else text + "x"


# -- estates ------------------------------------------------------------------------------

#: what a step names: an object (and so what lies below it), a user or a group
Named = ObjectRef | Principal
Step = tuple[Callable[[AccessControl], object], frozenset[Named]]


@dataclass
class Estate:
    """The steps that build one estate, each tagged with the objects it names."""

    seed: int
    steps: list[Step] = field(default_factory=list)
    objects: list[ObjectRef] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)

    def add(self, step: Callable[[AccessControl], object], *names: Named) -> None:
        self.steps.append((step, frozenset(names)))

    def build(self, door: Door, without: Named | None = None) -> None:
        assert door.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
        ac = door.ac.acting("admin")
        for step, names in self.steps:
            if without is None or not any(_names(n, without) for n in names):
                step(ac)


def _names(named: Named, victim: Named) -> bool:
    if isinstance(named, ObjectRef) and isinstance(victim, ObjectRef):
        return named.is_within(victim)
    return named == victim


def _grantable(rng: random.Random, ref: ObjectRef) -> Privilege:
    choices = []
    for p in Privilege:
        try:
            p.check_grantable_on(ref.type)
        except PushdownError:
            continue
        choices.append(p)
    return rng.choice(choices) if choices else Privilege.SELECT_TABLE


def draw_estate(seed: int) -> Estate:
    rng = random.Random(seed)
    e = Estate(seed)
    for user in USERS:
        e.add(lambda ac, u=user: ac.add_user(u), Principal.user(user))
    e.add(lambda ac: ac.add_group("team", ["bob", "eve"]), TEAM)
    for c in range(rng.randint(1, 2)):
        cat = ObjectRef(T.CATALOG, (hostile(rng) if rng.random() < 0.5 else f"c{c}",))
        if cat in e.objects:
            continue
        e.objects.append(cat)
        e.add(lambda ac, r=cat: ac.create_object(r), cat)
        for s in range(rng.randint(1, 2)):
            sch = ObjectRef(T.SCHEMA, (*cat.names, hostile(rng) if rng.random() < 0.5 else f"s{s}"))
            if sch in e.objects:
                continue
            e.objects.append(sch)
            e.add(lambda ac, r=sch: ac.create_object(r), sch)
            for _ in range(rng.randint(1, 2)):
                leaf = ObjectRef(rng.choice(list(LEAF)), (*sch.names, hostile(rng)))
                if leaf not in e.objects:
                    e.objects.append(leaf)
                    e.add(lambda ac, r=leaf: ac.create_object(r), leaf)
    # alice: a creator (CREATE_* on the metalake); bob and the team: holders; carol: ALLOW
    # on a catalog and DENY below it; dave: owner of an object
    creator = "creator" if rng.random() < 0.5 else hostile(rng)
    e.add(lambda ac: ac.create_role(creator), _role(creator))
    for p in (Privilege.CREATE_CATALOG, Privilege.CREATE_ROLE, Privilege.CREATE_SCHEMA):
        e.add(lambda ac, p=p: ac.grant_privileges(creator, METALAKE, [p]), _role(creator))
    e.add(lambda ac: ac.grant_role(creator, Principal.user("alice")), _role(creator))
    holder = hostile(rng)
    e.add(lambda ac: ac.create_role(holder), _role(holder))
    for ref in rng.sample(e.objects, min(3, len(e.objects))):
        p = _grantable(rng, ref)
        e.add(lambda ac, r=ref, p=p: ac.grant_privileges(holder, r, [p]), _role(holder), ref)
    e.add(lambda ac: ac.grant_role(holder, Principal.user("bob")), _role(holder))
    e.add(lambda ac: ac.grant_role(holder, TEAM), _role(holder), TEAM)
    denier = hostile(rng) + "!"
    e.add(lambda ac: ac.create_role(denier), _role(denier))
    cat = e.objects[0]
    for p in (Privilege.USE_CATALOG, Privilege.USE_SCHEMA, Privilege.SELECT_TABLE):
        e.add(lambda ac, p=p: ac.grant_privileges(denier, cat, [p]), _role(denier), cat)
    below = rng.choice([o for o in e.objects if o.type is not T.CATALOG])
    deny = Privilege.SELECT_TABLE if below.type in (T.SCHEMA, T.TABLE) else _grantable(rng, below)
    e.add(lambda ac: ac.grant_privileges(denier, below, [deny], "deny"), _role(denier), below)
    e.add(lambda ac: ac.grant_role(denier, CAROL), _role(denier), CAROL)
    owned = rng.choice(e.objects)
    e.add(lambda ac: ac.set_owner(owned, "dave"), owned)
    e.roles = [creator, holder, denier]
    return e


def _role(name: str) -> ObjectRef:
    return ObjectRef(T.ROLE, (name,))


# -- what every principal may do ------------------------------------------------------------


def _ops(ref: ObjectRef) -> list[str]:
    if ref == METALAKE:
        return ["load_metalake", "create_catalog", "create_role", "add_user"]
    if ref.type is T.ROLE:
        return ["get_role", "delete_role", "grant_role", "set_owner"]
    drop = f"drop_{ref.type.value}"
    return [LOAD_OPERATION[ref.type], drop, "set_owner", "grant_privilege"]


def permits(model: Model, users: list[str]) -> set[tuple[str, str, ObjectRef]]:
    ev = Evaluator(model)
    refs = [METALAKE, *model.objects, *(_role(r) for r in model.roles)]
    return {
        (u, op, ref)
        for u in users
        for ref in refs
        for op in _ops(ref)
        if ev.authorize(u, op, ref, explain=False).allowed
    }


def holders(model: Model, role: str) -> set[str]:
    direct = {u for u, roles in model.user_roles.items() if role in roles}
    via = {m for g, roles in model.group_roles.items() if role in roles for m in model.groups.get(g, ())}
    return direct | via


# -- requests ----------------------------------------------------------------------------------


@dataclass
class Request:
    method: str
    path: str
    body: Any
    #: the checks the requirement table names for it (operation, target)
    checks: list[tuple[str, Target]]
    #: the users whose permissions it may change when allowed (None: anyone, e.g. a drop)
    affects: set[str] | None


def _pick_ref(rng: random.Random, e: Estate, model: Model) -> ObjectRef:
    roll = rng.random()
    if roll < 0.15:
        return METALAKE
    if roll < 0.35:
        return _role(rng.choice([*model.roles, hostile(rng)]))
    if roll < 0.85 and e.objects:
        return rng.choice(e.objects)
    kind = rng.choice([T.CATALOG, T.SCHEMA, T.TABLE])
    return ObjectRef(kind, tuple(hostile(rng) for _ in range(kind.depth)))


def _full(ref: ObjectRef) -> str:
    return "test" if ref == METALAKE else ref.name


def _priv_body(rng: random.Random, ref: ObjectRef) -> dict[str, Any]:
    p = _grantable(rng, ref)
    return {"privileges": [{"name": p.value.lower(), "condition": rng.choice(["allow", "deny"])}]}


def draw_request(rng: random.Random, e: Estate, model: Model, route: Route, caller: str | None) -> Request:
    """A request for ``route`` with existing, missing or hostile names, and its checks."""
    user = rng.choice([*USERS, "admin", hostile(rng)])
    group = rng.choice(["team", hostile(rng)])
    role = rng.choice([*model.roles, hostile(rng)])
    ref = _pick_ref(rng, e, model)
    data = [o for o in e.objects if o.type in DATA_TYPES]
    parent = rng.choice([None, *data]) if data else None
    new = hostile(rng)
    t, me = route.template, caller or "anonymous"
    params = {"metalake": "test" if rng.random() < 0.9 else hostile(rng), "user": user, "group": group}
    params |= {"role": role, "type": ref.type.value, "fullName": _full(ref)}
    body: Any = None
    checks: list[tuple[str, Target]] = []
    affects: set[str] | None = set()
    op = route.operation
    if "{catalog}" in t:  # an object route: the path names a catalog (and a schema, a leaf)
        depth = t.count("{") - 1  # without {metalake}
        base = parent if parent is not None and parent.type.depth >= min(depth, 2) else None
        names = list(base.names[:depth]) if base is not None else []
        while len(names) < depth:
            names.append(hostile(rng))
        params |= dict(zip(("catalog", "schema", "name"), names, strict=False))
        kind = next(k for k, w in LEAF.items() if f"/{w}" in t) if "/schemas/{schema}/" in t else None
        kind = kind or (T.SCHEMA if "/schemas" in t else T.CATALOG)
        if route.method == "POST":
            body = {"name": new, "type": "relational", "provider": "hive", "columns": []}
            if rng.random() < 0.3:
                body["properties"] = {"backend": "mysql", "location": "/finance"}
            target = ObjectRef(kind, (*names, new))
            checks = [(f"create_{kind.value}", target)]
            affects = {me}  # the creator owns what it creates
        elif route.method == "DELETE":
            checks = [(f"drop_{kind.value}", ObjectRef(kind, tuple(names)))]
            affects = None
    elif t.endswith("/metalakes") and route.method == "POST":
        body = {"name": rng.choice(["test", new])}
        checks = [("create_metalake", METALAKE)]
    elif route.method == "DELETE" and t == M.replace("test", "{metalake}"):
        checks, affects = [("drop_metalake", METALAKE)], None
    elif t.endswith("/users") or t.endswith("/groups"):
        if route.method == "POST":
            body = {"name": rng.choice([new, user])}
            checks = [(op, body["name"])]  # type: ignore[list-item]
            affects = {body["name"], me}
    elif t.endswith("/roles") and route.method == "POST":
        objects = []
        if rng.random() < 0.5:
            obj = _pick_ref(rng, e, model)
            objects = [{"type": obj.type.value, "fullName": _full(obj), **_priv_body(rng, obj)}]
            checks.append(("grant_privilege", obj))
        body = {"name": rng.choice([new, role]), "securableObjects": objects}
        checks.insert(0, ("create_role", _role(body["name"])))
        affects = {me}
    elif route.method == "DELETE":  # a user, a group or a role
        if "{role}" in t:
            checks = [("delete_role", _role(role))]
            affects = holders(model, role) | {me}
        else:
            who = user if "{user}" in t else group
            checks = [(op, who)]  # type: ignore[list-item]
            affects = {who} | model.groups.get(group, set())
    elif t.endswith("/grant") or t.endswith("/revoke"):
        verb = "grant" if t.endswith("/grant") else "revoke"
        if "{fullName}" in t:
            body = _priv_body(rng, ref)
            checks = [(f"{verb}_privilege", ref)]
            affects = holders(model, role)
        else:
            names = [rng.choice([role, *model.roles])]
            body = {"roleNames": names}
            checks = [(f"{verb}_role", _role(n)) for n in names]
            affects = {user} if "{user}" in t else set(model.groups.get(group, ()))
    elif route.method == "PUT" and "/owners/" in t:
        body = {"name": rng.choice([user, *USERS]), "type": "USER"}
        checks = [("set_owner", ref)]
        affects = {body["name"], me, model.owners.get(ref, "")}
    elif route.operation == LOAD_OBJECT:
        pass
    path = t
    for key, value in params.items():
        path = path.replace("{" + key + "}", segment(value))
    return Request(route.method, path, body, checks, affects)


# -- the suite ---------------------------------------------------------------------------------


@dataclass
class Tally:
    requests: int = 0
    #: refused probes answered again by the twin estate without the object
    compared: int = 0
    escalations: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"requests {self.requests} ({self.compared} refusals compared with a twin), "
            f"escalations {len(self.escalations)}, leaks {len(self.leaks)}"
        )


def allowed(model: Model, caller: str | None, checks: list[tuple[str, Target]]) -> bool:
    if caller is None or not checks:
        return False
    ev = Evaluator(model)
    return all(ev.authorize(caller, op, target, explain=False).allowed for op, target in checks)


def attack(door: Door, e: Estate, rng: random.Random, tally: Tally, rounds: int) -> None:
    """Random requests by every kind of caller; each must change only what it was allowed to."""
    routes = [r for r in ROUTES if r.method != "CLOSE"]
    for _ in range(rounds):
        for route in routes:
            caller = rng.choice(CALLERS)
            model = door.ac.model
            req = draw_request(rng, e, model, route, caller)
            users = sorted(model.users | {"mallory"})
            ok = allowed(model, caller, req.checks)
            before, seq = permits(model, users), door.ac.store.last_seq()
            existed = {*model.objects, METALAKE, *(_role(r) for r in model.roles)}
            if route.method == "GET":
                before = set()  # a read: the store must not move; permits are not recomputed
            answer = door.request(req.method, req.path, caller, req.body)
            tally.requests += 1
            assert answer.status < 500, (req, answer)
            moved = door.ac.store.last_seq() != seq
            where = f"{caller} {req.method} {req.path} {req.body} -> {answer.status} {answer.body[:200]!r}"
            if moved and (route.method == "GET" or not ok):
                tally.escalations.append(f"changed without the right: {where}")
                continue
            if not moved or req.affects is None:
                continue
            after_model = door.ac.model
            survivors = [u for u in users if u in after_model.users or u == "mallory"]
            after = permits(after_model, survivors)
            common = existed & {*after_model.objects, METALAKE, *(_role(r) for r in after_model.roles)}
            may_change = req.affects
            changed = {
                p[0]
                for p in before ^ after
                if p[2] in common and p[0] in survivors and p[0] not in may_change
            }
            if changed:
                tally.escalations.append(f"changed what {sorted(changed)} may do: {where}")


def _principal_probes(victim: Principal, e: Estate) -> list[tuple[str, str, Any]]:
    """Requests naming a user or a group."""
    path = f"{M}/{victim.kind.value}s/{segment(victim.name)}"
    grants = f"{M}/permissions/{victim.kind.value}s/{segment(victim.name)}"
    roles = {"roleNames": [e.roles[1]]}
    return [
        ("GET", path, None),
        ("DELETE", path, None),
        ("PUT", f"{grants}/grant", roles),
        ("PUT", f"{grants}/revoke", roles),
    ]


def _probes(victim: Named, e: Estate, rng: random.Random) -> list[tuple[str, str, Any]]:
    """Requests naming ``victim`` (or naming it as the parent of what they ask for)."""
    if isinstance(victim, Principal):
        return _principal_probes(victim, e)
    full = segment(_full(victim))
    kind = victim.type.value
    out: list[tuple[str, str, Any]] = [
        ("GET", f"{M}/owners/{kind}/{full}", None),
        ("PUT", f"{M}/owners/{kind}/{full}", {"name": "eve", "type": "USER"}),
        ("GET", f"{M}/objects/{kind}/{full}/roles", None),
        ("PUT", f"{M}/permissions/roles/{segment(e.roles[1])}/{kind}/{full}/grant", _priv_body(rng, victim)),
    ]
    if victim.type is T.ROLE:
        role = segment(victim.names[0])
        out += [("GET", f"{M}/roles/{role}", None), ("DELETE", f"{M}/roles/{role}", None)]
        out += [("PUT", f"{M}/permissions/users/eve/grant", {"roleNames": [victim.names[0]]})]
        return out
    path = M + "".join(
        f"/{w}/{segment(n)}"
        for w, n in zip(("catalogs", "schemas", LEAF.get(victim.type, "")), victim.names, strict=False)
    )
    out += [("GET", path, None), ("DELETE", path, None)]
    if victim.type is T.CATALOG:
        out += [("GET", f"{path}/schemas", None), ("POST", f"{path}/schemas", {"name": "new"})]
    if victim.type is T.SCHEMA:
        out += [("GET", f"{path}/tables", None), ("POST", f"{path}/tables", {"name": "new", "columns": []})]
    return out


def _sees_by_grant(model: Model, caller: str | None, victim: Named) -> bool:
    """The caller's own roles name the victim or something below it (it knows it exists);
    a user is the victim, or a member of the victim group."""
    if caller is None:
        return False
    if isinstance(victim, Principal):
        return victim.name == caller or caller in model.groups.get(victim.name, ())
    held = (
        set(model.roles_of(caller)) if hasattr(model, "roles_of") else set(model.user_roles.get(caller, ()))
    )
    for group, members in model.groups.items():
        if caller in members:
            held |= model.group_roles.get(group, set())
    if victim.type is T.ROLE and victim.names[0] in held:
        return True
    return any(g.object.is_within(victim) for r in held for g in model.roles.get(r, ()))


def probe(tmp: Path, e: Estate, rng: random.Random, tally: Tally) -> None:
    """Each caller, each request naming a victim: with and without the victim, the same bytes."""
    victims: list[Named] = [*rng.sample(e.objects, min(2, len(e.objects))), _role(rng.choice(e.roles))]
    victims.append(rng.choice([TEAM, CAROL]))
    for i, victim in enumerate(victims):
        with_it, without = Door.open(tmp / f"a{e.seed}-{i}.db"), Door.open(tmp / f"b{e.seed}-{i}.db")
        try:
            e.build(with_it)
            e.build(without, victim)
            for caller in CALLERS:
                if caller in ("admin", "dave") or _sees_by_grant(with_it.ac.model, caller, victim):
                    continue
                for method, path, body in _probes(victim, e, rng):
                    seq = with_it.ac.store.last_seq(), without.ac.store.last_seq()
                    there: Answer = with_it.request(method, path, caller, body)
                    tally.requests += 1
                    if there.status not in (401, 403):
                        continue
                    missing = without.request(method, path, caller, body)
                    tally.requests += 1
                    tally.compared += 1
                    if (with_it.ac.store.last_seq(), without.ac.store.last_seq()) != seq:
                        tally.escalations.append(f"a refused probe changed a store: {caller} {method} {path}")
                    if missing.body != there.body or missing.status != there.status:
                        tally.leaks.append(
                            f"{caller} {method} {path}: {there.status} {there.body!r} "
                            f"but without {victim}: {missing.status} {missing.body!r}"
                        )
        finally:
            with_it.close()
            without.close()


@pytest.fixture
def tally() -> Iterator[Tally]:
    t = Tally()
    yield t
    print(f"\nhostile callers: {t.line()}")


@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", range(ESTATES))
def test_hostile_callers_neither_escalate_nor_learn_what_exists(
    tmp_path: Path, seed: int, tally: Tally, capsys: pytest.CaptureFixture[str]
) -> None:
    e = draw_estate(seed)
    rng = random.Random(seed * 7919)
    door = Door.open(tmp_path / "attack.db")
    try:
        e.build(door)
        attack(door, e, rng, tally, rounds=3)
    finally:
        door.close()
    probe(tmp_path, e, rng, tally)
    with capsys.disabled():
        print(f"\nestate {seed}: {tally.line()}")
    assert not tally.escalations, "\n".join(tally.escalations[:10])
    assert not tally.leaks, "\n".join(tally.leaks[:10])
