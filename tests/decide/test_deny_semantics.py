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
from tests.builders import Builder

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


def world() -> Builder:
    """Users admin/u/v, group g = {v}, roles r, and the objects above, all created by admin."""
    w = Builder().users("admin", "u", "v")
    for name, obj in OBJECTS.items():
        if name not in ("metalake", "role"):
            w.create(obj, "admin", {"backend": "x"} if name == "catalog" else {})
    return w.group("g", "v").role("r", owner="admin")


def role(
    w: Builder,
    name: str,
    *grants: tuple[ObjectRef, Privilege | str, Condition],
    users: tuple[str, ...] = ("u",),
    groups: tuple[str, ...] = (),
) -> None:
    w.role(name, *grants, owner="admin", users=users, groups=groups)


def gates(w: Builder, user: str = "u") -> None:
    """USE_CATALOG and USE_SCHEMA on catalog c: enough to load the catalog and every schema."""
    role(w, f"gates_{user}", (C, P.USE_CATALOG, ALLOW), (C, P.USE_SCHEMA, ALLOW), users=(user,))


def can(w: Builder, op: str, target: ObjectRef, user: str = "u") -> bool:
    return Evaluator(w.model).authorize(user, op, target).allowed


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
    w = world()
    grants = [(METALAKE, P.USE_CATALOG, metalake_cond), (C, P.USE_CATALOG, catalog_cond)]
    if split_roles:
        role(w, "a", grants[0])
        role(w, "b", grants[1])
    else:
        role(w, "a", *grants)
    assert not can(w, "load_catalog", C)
    assert not can(w, "list_schemas", C)
    assert P.USE_CATALOG not in Evaluator(w.model).effective_privileges("u", C)


def test_allow_and_deny_of_the_same_privilege_on_the_same_object() -> None:
    w = world()
    role(w, "a", (C, P.USE_CATALOG, ALLOW), (C, P.USE_CATALOG, DENY))
    assert not can(w, "load_catalog", C)


def test_without_the_deny_the_allow_stands() -> None:
    w = world()
    role(w, "a", (METALAKE, P.USE_CATALOG, ALLOW))
    assert can(w, "load_catalog", C)


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
    w = world()
    gates(w)
    role(w, "reader", (obj, read, ALLOW), (obj if deny_at == "object" else C, write, DENY))
    assert can(w, load_op, obj)
    assert not can(w, write_op, obj)
    assert Evaluator(w.model).effective_privileges("u", obj) == {read}


@pytest.mark.parametrize(PAIR_NAMES, PAIRS, ids=["table", "topic", "fileset"])
@pytest.mark.parametrize("deny_at", ["object", "catalog"])
def test_deny_read_leaves_allow_write(
    obj: ObjectRef, write: Privilege, read: Privilege, load_op: str, write_op: str, deny_at: str
) -> None:
    w = world()
    gates(w)
    role(w, "writer", (obj, write, ALLOW), (obj if deny_at == "object" else C, read, DENY))
    assert can(w, write_op, obj)
    assert can(w, load_op, obj)  # the write privilege alone lets you load
    assert Evaluator(w.model).effective_privileges("u", obj) == {write}


def test_deny_through_a_group_role_beats_a_direct_allow() -> None:
    w = world()
    gates(w)
    role(w, "reader", (T, P.SELECT_TABLE, ALLOW))
    role(w, "blocker", (S, P.SELECT_TABLE, DENY), users=(), groups=("g",))
    assert can(w, "load_table", T)
    w.member("g", "u")
    assert not can(w, "load_table", T)
    assert P.SELECT_TABLE not in Evaluator(w.model).effective_privileges("u", T)
    w.remove_member("g", "u")
    assert can(w, "load_table", T)


def test_deny_of_a_role_the_user_does_not_hold_does_not_matter() -> None:
    w = world()
    gates(w)
    role(w, "reader", (T, P.SELECT_TABLE, ALLOW))
    role(w, "blocker", (C, P.SELECT_TABLE, DENY), users=("v",))
    assert can(w, "load_table", T)
    assert not can(w, "load_table", T, user="v")


# -- inheritance -------------------------------------------------------------------------


def test_select_on_the_catalog_reaches_every_table_including_later_ones() -> None:
    w = world()
    w.create(ObjectRef.of("schema", "c.s2"), "admin")
    w.create(ObjectRef.of("table", "c.s2.x"), "admin")
    gates(w)
    role(w, "reader", (C, P.SELECT_TABLE, ALLOW))
    later = [ObjectRef.of("schema", "c.s3"), ObjectRef.of("table", "c.s3.y"), ObjectRef.of("table", "c.s.z")]
    for obj in later:
        w.create(obj, "admin")
    for table in (T, ObjectRef.of("table", "c.s2.x"), later[1], later[2]):
        assert can(w, "load_table", table), table
        assert not can(w, "alter_table", table)
        assert Evaluator(w.model).effective_privileges("u", table) == {P.SELECT_TABLE}
    assert P.SELECT_TABLE in Evaluator(w.model).effective_privileges("u", later[0])


def test_grants_do_not_flow_upward_or_sideways() -> None:
    w = world()
    w.create(ObjectRef.of("catalog", "c2"), "admin", {"backend": "x"})
    role(w, "a", (S, P.SELECT_TABLE, ALLOW), (C, P.USE_CATALOG, ALLOW))
    ev = Evaluator(w.model)
    assert P.SELECT_TABLE in ev.effective_privileges("u", T)
    assert P.SELECT_TABLE not in ev.effective_privileges("u", C)
    assert P.SELECT_TABLE not in ev.effective_privileges("u", METALAKE)
    assert P.USE_CATALOG not in ev.effective_privileges("u", ObjectRef.of("catalog", "c2"))


# -- effective privileges for users, groups and roles ------------------------------------------


def test_effective_privileges_per_principal_kind() -> None:
    w = world()
    role(w, "ra", (S, P.SELECT_TABLE, ALLOW), (S, P.MODIFY_TABLE, ALLOW))
    role(w, "rb", (C, P.MODIFY_TABLE, DENY), (METALAKE, P.USE_CATALOG, ALLOW), users=(), groups=("g",))
    w.member("g", "u")
    ev = Evaluator(w.model)
    assert ev.effective_privileges(Principal.role("ra"), T) == {P.SELECT_TABLE, P.MODIFY_TABLE}
    assert ev.effective_privileges(Principal.role("rb"), T) == set()
    assert ev.effective_privileges(Principal.group("g"), T) == set()
    assert ev.effective_privileges(Principal.group("g"), C) == {P.USE_CATALOG}
    assert ev.effective_privileges(Principal.user("u"), T) == {P.SELECT_TABLE}
    assert ev.effective_privileges("u", T) == {P.SELECT_TABLE}
    assert ev.effective_privileges(Principal.user("u"), C) == {P.USE_CATALOG}
    assert ev.effective_privileges(Principal.user("v"), C) == {P.USE_CATALOG}  # v is in g
    assert ev.effective_privileges(Principal.user("v"), T) == set()
    assert effective_privileges(w.model, Principal.user("u"), S) == {P.SELECT_TABLE}


# -- deprecated model privileges ----------------------------------------------------------------


def test_deprecated_model_privileges_are_aliases() -> None:
    assert Privilege.parse("CREATE_MODEL") is P.REGISTER_MODEL
    assert Privilege.parse("CREATE_MODEL_VERSION") is P.LINK_MODEL_VERSION
    w = world()
    gates(w)
    role(
        w,
        "old",
        (S, "CREATE_MODEL", ALLOW),
        (MODEL, "USE_MODEL", ALLOW),
        (MODEL, "CREATE_MODEL_VERSION", ALLOW),
    )
    assert can(w, "register_model", ObjectRef.of("model", "c.s.new"))
    assert can(w, "link_model_version", MODEL)
    ev = Evaluator(w.model)
    assert P.REGISTER_MODEL in ev.effective_privileges("u", S)
    assert P.LINK_MODEL_VERSION in ev.effective_privileges("u", MODEL)
    w.revoke("old", MODEL, ["LINK_MODEL_VERSION"])
    assert not can(w, "link_model_version", MODEL)


def test_deprecated_alias_denied_by_its_new_name() -> None:
    w = world()
    gates(w)
    role(w, "old", (S, "CREATE_MODEL", ALLOW), (C, P.REGISTER_MODEL, DENY))
    assert not can(w, "register_model", ObjectRef.of("model", "c.s.new"))


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
        w = world()
        w.role("x")
        if type_name in accepted:
            w.grant("x", obj, [name], ALLOW)
            assert len(w.model.roles["x"]) == 1
            continue
        with pytest.raises(ModelError) as info:
            changes.grant_privileges(w.model, "x", obj, [name], ALLOW)
        message = _label(str(info.value))
        head, _, tail = message.partition("accepted")
        canonical = Privilege.parse(name).value
        assert name in head or _label(canonical) in head, message
        assert re.search(rf"\b{_label(type_name)}\b", head), message
        for accepted_type in accepted:
            assert re.search(rf"\b{_label(accepted_type)}\b", tail), message
        assert not w.model.roles["x"]


# -- ownership --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [PrincipalKind.GROUP, PrincipalKind.ROLE])
@pytest.mark.parametrize("obj", [METALAKE, C, T, OBJECTS["tag"], OBJECTS["role"]], ids=str)
def test_only_users_can_be_owners(kind: PrincipalKind, obj: ObjectRef) -> None:
    w = world()
    before = dict(w.model.owners)
    name = "g" if kind is PrincipalKind.GROUP else "r"
    with pytest.raises(ModelError) as info:
        changes.set_owner(w.model, obj, name, kind)
    message = str(info.value).lower()
    assert "cannot be owners" in message and "only users can be owners" in message, message
    assert w.model.owners == before


def test_creator_becomes_owner_and_owner_can_be_transferred_to_a_user() -> None:
    w = world()
    mine = ObjectRef.of("table", "c.s.mine")
    w.create(mine, "v")
    assert w.model.owners[mine] == "v"
    gates(w, "u")
    gates(w, "v")
    assert can(w, "drop_table", mine, user="v")
    assert not can(w, "drop_table", mine, user="u")
    w.owner(mine, "u")
    assert w.model.owners[mine] == "u"
    assert can(w, "drop_table", mine, user="u")
    assert not can(w, "drop_table", mine, user="v")


# -- decision traces ---------------------------------------------------------------------------


def _line(text: str, *words: str) -> str:
    lines = [ln for ln in text.splitlines() if all(w in ln for w in words)]
    assert lines, f"no line naming {words} in:\n{text}"
    return lines[0]


def test_trace_names_the_role_and_the_grant_object() -> None:
    w = world()
    gates(w)
    role(w, "reader", (S, P.SELECT_TABLE, ALLOW))
    d = Evaluator(w.model).authorize("u", "load_table", T)
    assert d.allowed and bool(d)
    text = d.explain()
    assert "ALLOWED" in text.splitlines()[0]
    _line(text, "SELECT_TABLE", "reader", str(S))
    _line(text, "USE_CATALOG", "gates_u", str(C))


def test_trace_names_the_deny_that_decided() -> None:
    w = world()
    gates(w)
    role(w, "reader", (T, P.SELECT_TABLE, ALLOW))
    role(w, "blocker", (C, P.SELECT_TABLE, DENY), users=(), groups=("g",))
    w.member("g", "u")
    d = Evaluator(w.model).authorize("u", "load_table", T)
    assert not d.allowed
    text = d.explain()
    assert "DENIED" in text.splitlines()[0]
    line = _line(text, "DENY", "SELECT_TABLE", "blocker", str(C))
    assert "group g" in line.split("blocker", 1)[1], line  # held through group g


def test_trace_names_the_ownership_that_decided() -> None:
    w = world()
    w.owner(S, "u")
    role(w, "uc", (C, P.USE_CATALOG, ALLOW))
    d = Evaluator(w.model).authorize("u", "drop_table", T)
    assert d.allowed
    _line(d.explain(), "u owns", str(S))


def test_trace_names_the_missing_gate() -> None:
    w = world()
    w.owner(T, "u")
    d = Evaluator(w.model).authorize("u", "load_table", T)
    assert not d.allowed
    text = d.explain()
    _line(text, "load_catalog", str(C))
    _line(text, "USE_CATALOG")


@pytest.mark.parametrize("deny", ["DENY", "deny", " Deny "])
def test_a_condition_given_as_text_is_a_deny_in_the_model_layer_too(deny: str) -> None:
    """A library caller of the model layer may pass the condition as text; a DENY kept as
    text was counted as an ALLOW by the trace and ignored by the fast path (fail open)."""
    b = world()
    role(b, "reader", (C, P.USE_CATALOG, ALLOW), (C, P.USE_SCHEMA, ALLOW), (C, P.SELECT_TABLE, ALLOW))
    assert Evaluator(b.model).authorize("u", "load_table", T, explain=False)
    b.do(changes.grant_privileges, "reader", T, ["SELECT_TABLE"], deny)
    evaluator = Evaluator(b.model)
    assert not evaluator.authorize("u", "load_table", T, explain=False)
    assert not evaluator.authorize("u", "load_table", T)
    b.do(changes.revoke_privileges, "reader", T, ["SELECT_TABLE"], deny)
    assert Evaluator(b.model).authorize("u", "load_table", T, explain=False)
    with pytest.raises(ModelError, match="unknown condition"):
        changes.grant_privileges(b.model, "reader", T, ["SELECT_TABLE"], "MAYBE")
