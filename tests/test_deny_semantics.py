"""ALLOW / DENY, inheritance, privilege placement, ownership rules and decision traces,
each taken from the reference's text (Privilege Types, Privilege Inheritance, Privilege
Conditions, Ownership)."""

from __future__ import annotations

import re

import pytest

from pushdown.decide.evaluator import Evaluator, effective_privileges
from pushdown.errors import ModelError
from pushdown.model import changes
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Model

ALLOW, DENY = Condition.ALLOW, Condition.DENY
P = Privilege
C, S, T = ObjectRef.of("catalog", "c"), ObjectRef.of("schema", "c.s"), ObjectRef.of("table", "c.s.t")
TOPIC, FILESET = ObjectRef.of("topic", "c.s.tp"), ObjectRef.of("fileset", "c.s.f")
MODEL = ObjectRef.of("model", "c.s.m")
OBJECTS = {
    "metalake": METALAKE,
    "catalog": C,
    "schema": S,
    "table": T,
    "topic": TOPIC,
    "fileset": FILESET,
    "model": MODEL,
    "tag": ObjectRef.of("tag", "tg"),
    "policy": ObjectRef.of("policy", "pol"),
    "job_template": ObjectRef.of("job_template", "jt"),
    "job": ObjectRef.of("job", "j"),
    "role": ObjectRef.of("role", "r"),
}


def apply(model: Model, events: list) -> None:
    for e in events:
        model.apply(e)


def world() -> Model:
    """Users admin/u/v, group g = {v}, roles r, and the objects above, all created by admin."""
    m = Model()
    for user in ("admin", "u", "v"):
        apply(m, changes.add_user(m, user))
    for name, obj in OBJECTS.items():
        if name not in ("metalake", "role"):
            props = {"backend": "x"} if name == "catalog" else {}
            apply(m, changes.create_object(m, obj, "admin", props))
    apply(m, changes.add_group(m, "g", ["v"]))
    apply(m, changes.create_role(m, "r", owner="admin"))
    return m


def role(
    m: Model,
    name: str,
    *grants: tuple[ObjectRef, Privilege | str, Condition],
    users: tuple[str, ...] = ("u",),
    groups: tuple[str, ...] = (),
) -> None:
    apply(m, changes.create_role(m, name, owner="admin"))
    for obj, priv, cond in grants:
        apply(m, changes.grant_privileges(m, name, obj, [priv], cond))
    for user in users:
        apply(m, changes.grant_role(m, name, Principal.user(user)))
    for group in groups:
        apply(m, changes.grant_role(m, name, Principal.group(group)))


def gates(m: Model, user: str = "u") -> None:
    """USE_CATALOG and USE_SCHEMA on catalog c: enough to load the catalog and every schema."""
    role(m, f"gates_{user}", (C, P.USE_CATALOG, ALLOW), (C, P.USE_SCHEMA, ALLOW), users=(user,))


def can(m: Model, op: str, target: ObjectRef, user: str = "u") -> bool:
    return Evaluator(m).authorize(user, op, target).allowed


# -- Example 1 / Example 2 of "Inheritance and Conditions" ----------------------------------


@pytest.mark.parametrize(
    ("metalake_cond", "catalog_cond"),
    [(ALLOW, DENY), (DENY, ALLOW)],
    ids=["parent-allow-child-deny", "parent-deny-child-allow"],
)
@pytest.mark.parametrize("split_roles", [False, True], ids=["one-role", "two-roles"])
def test_deny_wins_across_the_hierarchy(
    metalake_cond: Condition, catalog_cond: Condition, split_roles: bool
) -> None:
    m = world()
    grants = [(METALAKE, P.USE_CATALOG, metalake_cond), (C, P.USE_CATALOG, catalog_cond)]
    if split_roles:
        role(m, "a", grants[0])
        role(m, "b", grants[1])
    else:
        role(m, "a", *grants)
    assert not can(m, "load_catalog", C)
    assert not can(m, "list_schemas", C)
    assert P.USE_CATALOG not in Evaluator(m).effective_privileges("u", C)


def test_allow_and_deny_of_the_same_privilege_on_the_same_object() -> None:
    m = world()
    role(m, "a", (C, P.USE_CATALOG, ALLOW), (C, P.USE_CATALOG, DENY))
    assert not can(m, "load_catalog", C)


def test_without_the_deny_the_allow_stands() -> None:
    m = world()
    role(m, "a", (METALAKE, P.USE_CATALOG, ALLOW))
    assert can(m, "load_catalog", C)


# -- each privilege is judged on its own ---------------------------------------------------

PAIRS = [
    # (object, write privilege, read privilege, load operation, write operation)
    (T, P.MODIFY_TABLE, P.SELECT_TABLE, "load_table", "alter_table"),
    (TOPIC, P.PRODUCE_TOPIC, P.CONSUME_TOPIC, "load_topic", "alter_topic"),
    (FILESET, P.WRITE_FILESET, P.READ_FILESET, "load_fileset", "alter_fileset"),
]
PAIR_NAMES = ("obj", "write", "read", "load_op", "write_op")


@pytest.mark.parametrize(PAIR_NAMES, PAIRS, ids=["table", "topic", "fileset"])
@pytest.mark.parametrize("deny_at", ["object", "catalog"])
def test_deny_write_leaves_allow_read(
    obj: ObjectRef, write: Privilege, read: Privilege, load_op: str, write_op: str, deny_at: str
) -> None:
    m = world()
    gates(m)
    role(m, "reader", (obj, read, ALLOW), (obj if deny_at == "object" else C, write, DENY))
    assert can(m, load_op, obj)
    assert not can(m, write_op, obj)
    assert Evaluator(m).effective_privileges("u", obj) == {read}


@pytest.mark.parametrize(PAIR_NAMES, PAIRS, ids=["table", "topic", "fileset"])
@pytest.mark.parametrize("deny_at", ["object", "catalog"])
def test_deny_read_leaves_allow_write(
    obj: ObjectRef, write: Privilege, read: Privilege, load_op: str, write_op: str, deny_at: str
) -> None:
    m = world()
    gates(m)
    role(m, "writer", (obj, write, ALLOW), (obj if deny_at == "object" else C, read, DENY))
    assert can(m, write_op, obj)
    assert can(m, load_op, obj)  # the write privilege alone lets you load
    assert Evaluator(m).effective_privileges("u", obj) == {write}


def test_deny_through_a_group_role_beats_a_direct_allow() -> None:
    m = world()
    gates(m)
    role(m, "reader", (T, P.SELECT_TABLE, ALLOW))
    role(m, "blocker", (S, P.SELECT_TABLE, DENY), users=(), groups=("g",))
    assert can(m, "load_table", T)
    apply(m, changes.add_member(m, "g", "u"))
    assert not can(m, "load_table", T)
    assert P.SELECT_TABLE not in Evaluator(m).effective_privileges("u", T)
    apply(m, changes.remove_member(m, "g", "u"))
    assert can(m, "load_table", T)


def test_deny_of_a_role_the_user_does_not_hold_does_not_matter() -> None:
    m = world()
    gates(m)
    role(m, "reader", (T, P.SELECT_TABLE, ALLOW))
    role(m, "blocker", (C, P.SELECT_TABLE, DENY), users=("v",))
    assert can(m, "load_table", T)
    assert not can(m, "load_table", T, user="v")


# -- inheritance -------------------------------------------------------------------------


def test_select_on_the_catalog_reaches_every_table_including_later_ones() -> None:
    m = world()
    apply(m, changes.create_object(m, ObjectRef.of("schema", "c.s2"), "admin"))
    apply(m, changes.create_object(m, ObjectRef.of("table", "c.s2.x"), "admin"))
    gates(m)
    role(m, "reader", (C, P.SELECT_TABLE, ALLOW))
    later = [ObjectRef.of("schema", "c.s3"), ObjectRef.of("table", "c.s3.y"), ObjectRef.of("table", "c.s.z")]
    for obj in later:
        apply(m, changes.create_object(m, obj, "admin"))
    for table in (T, ObjectRef.of("table", "c.s2.x"), later[1], later[2]):
        assert can(m, "load_table", table), table
        assert not can(m, "alter_table", table)
        assert Evaluator(m).effective_privileges("u", table) == {P.SELECT_TABLE}
    assert P.SELECT_TABLE in Evaluator(m).effective_privileges("u", later[0])


def test_grants_do_not_flow_upward_or_sideways() -> None:
    m = world()
    apply(m, changes.create_object(m, ObjectRef.of("catalog", "c2"), "admin", {"backend": "x"}))
    role(m, "a", (S, P.SELECT_TABLE, ALLOW), (C, P.USE_CATALOG, ALLOW))
    ev = Evaluator(m)
    assert P.SELECT_TABLE in ev.effective_privileges("u", T)
    assert P.SELECT_TABLE not in ev.effective_privileges("u", C)
    assert P.SELECT_TABLE not in ev.effective_privileges("u", METALAKE)
    assert P.USE_CATALOG not in ev.effective_privileges("u", ObjectRef.of("catalog", "c2"))


# -- effective privileges for users, groups and roles ------------------------------------------


def test_effective_privileges_per_principal_kind() -> None:
    m = world()
    role(m, "ra", (S, P.SELECT_TABLE, ALLOW), (S, P.MODIFY_TABLE, ALLOW))
    role(m, "rb", (C, P.MODIFY_TABLE, DENY), (METALAKE, P.USE_CATALOG, ALLOW), users=(), groups=("g",))
    apply(m, changes.add_member(m, "g", "u"))
    ev = Evaluator(m)
    assert ev.effective_privileges(Principal.role("ra"), T) == {P.SELECT_TABLE, P.MODIFY_TABLE}
    assert ev.effective_privileges(Principal.role("rb"), T) == set()
    assert ev.effective_privileges(Principal.group("g"), T) == set()
    assert ev.effective_privileges(Principal.group("g"), C) == {P.USE_CATALOG}
    assert ev.effective_privileges(Principal.user("u"), T) == {P.SELECT_TABLE}
    assert ev.effective_privileges("u", T) == {P.SELECT_TABLE}
    assert ev.effective_privileges(Principal.user("u"), C) == {P.USE_CATALOG}
    assert ev.effective_privileges(Principal.user("v"), C) == {P.USE_CATALOG}  # v is in g
    assert ev.effective_privileges(Principal.user("v"), T) == set()
    assert effective_privileges(m, Principal.user("u"), S) == {P.SELECT_TABLE}


# -- deprecated model privileges ----------------------------------------------------------------


def test_deprecated_model_privileges_are_aliases() -> None:
    assert Privilege.parse("CREATE_MODEL") is P.REGISTER_MODEL
    assert Privilege.parse("CREATE_MODEL_VERSION") is P.LINK_MODEL_VERSION
    m = world()
    gates(m)
    role(
        m,
        "old",
        (S, "CREATE_MODEL", ALLOW),
        (MODEL, "USE_MODEL", ALLOW),
        (MODEL, "CREATE_MODEL_VERSION", ALLOW),
    )
    assert can(m, "register_model", ObjectRef.of("model", "c.s.new"))
    assert can(m, "link_model_version", MODEL)
    ev = Evaluator(m)
    assert P.REGISTER_MODEL in ev.effective_privileges("u", S)
    assert P.LINK_MODEL_VERSION in ev.effective_privileges("u", MODEL)
    apply(m, changes.revoke_privileges(m, "old", MODEL, ["LINK_MODEL_VERSION"]))
    assert not can(m, "link_model_version", MODEL)


def test_deprecated_alias_denied_by_its_new_name() -> None:
    m = world()
    gates(m)
    role(m, "old", (S, "CREATE_MODEL", ALLOW), (C, P.REGISTER_MODEL, DENY))
    assert not can(m, "register_model", ObjectRef.of("model", "c.s.new"))


# -- where each privilege may be granted ("Supports Securable Object" columns) -------------------

SUPPORTS = {
    "MANAGE_USERS": "metalake",
    "MANAGE_GROUPS": "metalake",
    "CREATE_ROLE": "metalake",
    "MANAGE_GRANTS": "metalake",
    "CREATE_CATALOG": "metalake",
    "USE_CATALOG": "metalake catalog",
    "CREATE_SCHEMA": "metalake catalog",
    "USE_SCHEMA": "metalake catalog schema",
    "CREATE_TABLE": "metalake catalog schema",
    "MODIFY_TABLE": "metalake catalog schema table",
    "SELECT_TABLE": "metalake catalog schema table",
    "CREATE_TOPIC": "metalake catalog schema",
    "PRODUCE_TOPIC": "metalake catalog schema topic",
    "CONSUME_TOPIC": "metalake catalog schema topic",
    "CREATE_FILESET": "metalake catalog schema",
    "WRITE_FILESET": "metalake catalog schema fileset",
    "READ_FILESET": "metalake catalog schema fileset",
    "REGISTER_MODEL": "metalake catalog schema",
    "LINK_MODEL_VERSION": "metalake catalog schema model",
    "USE_MODEL": "metalake catalog schema model",
    "CREATE_MODEL": "metalake catalog schema",
    "CREATE_MODEL_VERSION": "metalake catalog schema model",
    "CREATE_TAG": "metalake",
    "APPLY_TAG": "metalake tag",
    "CREATE_POLICY": "metalake",
    "APPLY_POLICY": "metalake policy",
    "REGISTER_JOB_TEMPLATE": "metalake",
    "USE_JOB_TEMPLATE": "metalake job_template",
    "RUN_JOB": "metalake",
}


def test_privilege_names_match_the_reference() -> None:
    assert {p.value for p in Privilege} == set(SUPPORTS) - {"CREATE_MODEL", "CREATE_MODEL_VERSION"}


def _label(type_name: str) -> str:
    return type_name.replace("_", " ")


@pytest.mark.parametrize("name", sorted(SUPPORTS))
def test_privilege_is_grantable_exactly_where_the_reference_says(name: str) -> None:
    accepted = SUPPORTS[name].split()
    for type_name, obj in OBJECTS.items():
        m = world()
        apply(m, changes.create_role(m, "x"))
        if type_name in accepted:
            apply(m, changes.grant_privileges(m, "x", obj, [name], ALLOW))
            assert len(m.roles["x"]) == 1
            continue
        with pytest.raises(ModelError) as info:
            changes.grant_privileges(m, "x", obj, [name], ALLOW)
        message = _label(str(info.value))
        head, _, tail = message.partition("accepted")
        canonical = Privilege.parse(name).value
        assert name in head or _label(canonical) in head, message
        assert re.search(rf"\b{_label(type_name)}\b", head), message
        for accepted_type in accepted:
            assert re.search(rf"\b{_label(accepted_type)}\b", tail), message
        assert not m.roles["x"]


# -- ownership --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [PrincipalKind.GROUP, PrincipalKind.ROLE])
@pytest.mark.parametrize("obj", [METALAKE, C, T, OBJECTS["tag"], OBJECTS["role"]], ids=str)
def test_only_users_can_be_owners(kind: PrincipalKind, obj: ObjectRef) -> None:
    m = world()
    before = dict(m.owners)
    name = "g" if kind is PrincipalKind.GROUP else "r"
    with pytest.raises(ModelError) as info:
        changes.set_owner(m, obj, name, kind)
    message = str(info.value).lower()
    assert "cannot be owners" in message and "only users can be owners" in message, message
    assert m.owners == before


def test_creator_becomes_owner_and_owner_can_be_transferred_to_a_user() -> None:
    m = world()
    mine = ObjectRef.of("table", "c.s.mine")
    apply(m, changes.create_object(m, mine, "v"))
    assert m.owners[mine] == "v"
    gates(m, "u")
    gates(m, "v")
    assert can(m, "drop_table", mine, user="v")
    assert not can(m, "drop_table", mine, user="u")
    apply(m, changes.set_owner(m, mine, "u"))
    assert m.owners[mine] == "u"
    assert can(m, "drop_table", mine, user="u")
    assert not can(m, "drop_table", mine, user="v")


# -- decision traces ---------------------------------------------------------------------------


def _line(text: str, *words: str) -> str:
    lines = [ln for ln in text.splitlines() if all(w in ln for w in words)]
    assert lines, f"no line naming {words} in:\n{text}"
    return lines[0]


def test_trace_names_the_role_and_the_grant_object() -> None:
    m = world()
    gates(m)
    role(m, "reader", (S, P.SELECT_TABLE, ALLOW))
    d = Evaluator(m).authorize("u", "load_table", T)
    assert d.allowed and bool(d)
    text = d.explain()
    assert "ALLOWED" in text.splitlines()[0]
    _line(text, "SELECT_TABLE", "reader", str(S))
    _line(text, "USE_CATALOG", "gates_u", str(C))


def test_trace_names_the_deny_that_decided() -> None:
    m = world()
    gates(m)
    role(m, "reader", (T, P.SELECT_TABLE, ALLOW))
    role(m, "blocker", (C, P.SELECT_TABLE, DENY), users=(), groups=("g",))
    apply(m, changes.add_member(m, "g", "u"))
    d = Evaluator(m).authorize("u", "load_table", T)
    assert not d.allowed
    text = d.explain()
    assert "DENIED" in text.splitlines()[0]
    line = _line(text, "DENY", "SELECT_TABLE", "blocker", str(C))
    assert "group g" in line.split("blocker", 1)[1], line  # held through group g


def test_trace_names_the_ownership_that_decided() -> None:
    m = world()
    apply(m, changes.set_owner(m, S, "u"))
    role(m, "uc", (C, P.USE_CATALOG, ALLOW))
    d = Evaluator(m).authorize("u", "drop_table", T)
    assert d.allowed
    _line(d.explain(), "u owns", str(S))


def test_trace_names_the_missing_gate() -> None:
    m = world()
    apply(m, changes.set_owner(m, T, "u"))
    d = Evaluator(m).authorize("u", "load_table", T)
    assert not d.allowed
    text = d.explain()
    _line(text, "load_catalog", str(C))
    _line(text, "USE_CATALOG")
