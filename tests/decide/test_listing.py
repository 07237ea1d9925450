"""Listings answer exactly like checking every item of the inventory one by one.

``pushdown.decide.listing.visible`` lists objects from their container's children and
users, groups and roles from the terms of their get operation; the slow filter here
scans every registered object (or every user, group, role) and asks ``authorize`` of
each. The random models are ``tests.builders.models()`` with, on top, management
privileges (MANAGE_USERS, MANAGE_GROUPS, MANAGE_GRANTS) allowed or denied on the
metalake, tags, policies, job templates, jobs, topics, filesets and models with random
owners and grants, and grants written straight on role objects (events the change
functions refuse, so the fast paths are tried on what they guard against too).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.decide.evaluator import Evaluator, Target, operation_named, resolve_target
from pushdown.decide.listing import visible
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ModelError
from pushdown.model import changes
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from tests.builders import ROLES, USERS, Builder, models

P = Privilege
T = SecurableType
ALLOW, DENY = Condition.ALLOW, Condition.DENY
CHECKED = settings(max_examples=120, deadline=None, database=None)
LISTINGS = sorted(name for name, op in OPERATIONS.items() if op.lists is not None)
#: objects added to every drawn model, parents first (a schema renamed or dropped takes its leaves)
EXTRA = (
    ObjectRef.of("tag", "tg0"),
    ObjectRef.of("tag", "tg1"),
    ObjectRef.of("policy", "pol0"),
    ObjectRef.of("job_template", "jt0"),
    ObjectRef.of("job", "j0"),
    ObjectRef.of("topic", "c.s0.tp0"),
    ObjectRef.of("fileset", "c.s0.f0"),
    ObjectRef.of("model", "c.s0.m0"),
    ObjectRef.of("table", "c.s1.t9"),
)
MANAGE = (P.MANAGE_USERS, P.MANAGE_GROUPS, P.MANAGE_GRANTS)
EXTRA_GRANTS = (
    (P.APPLY_TAG, METALAKE),
    (P.APPLY_TAG, EXTRA[0]),
    (P.APPLY_POLICY, EXTRA[2]),
    (P.USE_JOB_TEMPLATE, EXTRA[3]),
    (P.CONSUME_TOPIC, EXTRA[5]),
    (P.READ_FILESET, EXTRA[6]),
    (P.USE_MODEL, EXTRA[7]),
    (P.USE_CATALOG, METALAKE),
    (P.USE_SCHEMA, METALAKE),
)


@st.composite
def listed_models(draw: st.DrawFn) -> Model:
    b = Builder(draw(models()))
    m = b.model
    users = sorted(m.users)
    owner = st.sampled_from((None, *users))
    for obj in EXTRA:
        if obj.parent is not None and obj.parent != METALAKE and obj.parent not in m.objects:
            continue  # its schema was renamed or dropped
        b.create(obj, draw(owner, label=f"owner of {obj}"))
    roles = sorted(m.roles)
    for privilege, obj in draw(st.lists(st.sampled_from(EXTRA_GRANTS), max_size=6), label="more grants"):
        if obj in m.objects or obj == METALAKE:
            b.grant(draw(st.sampled_from(roles)), obj, [privilege], draw(st.sampled_from(Condition)))
    holding = st.tuples(st.sampled_from(users), st.sampled_from(roles))
    for user, role in sorted(draw(st.frozensets(holding, min_size=1, max_size=4), label="more holders")):
        if role not in m.user_roles.get(user, ()):
            b.grant_role(role, users=[user])
    manage = st.tuples(st.sampled_from(MANAGE), st.sampled_from(roles), st.sampled_from(Condition))
    managed = draw(st.lists(manage, min_size=1, max_size=4), label="management grants")
    for privilege, holder, condition in managed:
        b.grant(holder, METALAKE, [privilege], condition)
    manager = draw(st.sampled_from(roles), label="a role that manages grants")
    if draw(st.booleans(), label="it does"):
        b.grant(manager, METALAKE, [P.MANAGE_GRANTS], ALLOW)
        user = draw(st.sampled_from(users), label="held by")
        if manager not in m.user_roles.get(user, ()):
            b.grant_role(manager, users=[user])
    holders = st.sampled_from((manager, manager, *roles))
    on_roles = st.tuples(holders, st.sampled_from(ROLES), st.sampled_from(Condition))
    on_role_objects = draw(st.lists(on_roles, min_size=1, max_size=4), label="grants on role objects")
    for holder, role, condition in on_role_objects:
        m.apply(
            ev.PrivilegesGranted(holder, ObjectRef.of("role", role), frozenset({P.MANAGE_GRANTS}), condition)
        )
    if draw(st.booleans(), label="a role is deleted"):
        doomed = draw(st.sampled_from(roles))
        b.do(changes.delete_role, doomed)
    return m


def item_by_item(evaluator: Evaluator, user: str, list_op: str, container: Target) -> list[Target]:
    """The definition: the gate, then every item of the inventory checked on its own."""
    op = operation_named(list_op)
    if op.lists is None or op.lists not in OPERATIONS:
        raise ModelError(f"{op.name} is not a listing pushdown can filter")
    target = resolve_target(op, container)
    if not evaluator.authorize(user, op.name, target, explain=False):
        return []
    model = evaluator.model
    items: list[Target]
    if op.lists == "get_user":
        items = sorted(model.users)
    elif op.lists == "get_group":
        items = sorted(model.groups)
    elif op.lists == "get_role":
        items = [ObjectRef.of("role", (r,)) for r in sorted(model.roles)]
    else:
        kind = OPERATIONS[op.lists].target
        assert isinstance(kind, SecurableType)
        root = target if isinstance(target, ObjectRef) else METALAKE
        items = sorted(o for o in model.objects if o.type is kind and o.is_within(root))
    return [i for i in items if evaluator.authorize(user, op.lists, i, explain=False)]


def containers(model: Model, list_op: str) -> list[ObjectRef]:
    kind = OPERATIONS[list_op].target
    everything = sorted({METALAKE, *model.objects, *(ObjectRef.of("role", r) for r in model.roles)})
    if kind in ("object", "securable"):
        return everything
    return [o for o in everything if o.type is kind]


@CHECKED
@given(listed_models())
def test_every_listing_equals_the_item_by_item_filter(model: Model) -> None:
    fast, slow = Evaluator(model), Evaluator(model)
    for list_op in LISTINGS:
        for container in containers(model, list_op):
            for user in (*USERS, "nobody"):
                try:
                    expected = item_by_item(slow, user, list_op, container)
                except ModelError:
                    with pytest.raises(ModelError):
                        visible(fast, user, list_op, container)
                    continue
                assert visible(fast, user, list_op, container) == expected, (user, list_op, container)


def test_the_fast_paths_are_taken_and_agree_on_a_known_model() -> None:
    """A model where each branch of the principal listings has something to show."""
    m = (
        Builder()
        .users("owner", "manager", "member", "grantee", "nobody")
        .group("g", "member")
        .group("h")
        .owner("metalake", "owner")
        .role("mine", owner="grantee")
        .role("held", groups=["g"])
        .role("other")
        .role("admin", users=["manager"])
        .allow("admin", "metalake", "MANAGE_USERS", "MANAGE_GROUPS", "MANAGE_GRANTS")
        .model
    )
    # grants on role objects, which the change functions refuse (MANAGE_GRANTS is a metalake privilege)
    other = ObjectRef.of("role", "other")
    m.apply(ev.PrivilegesGranted("mine", other, frozenset({P.MANAGE_GRANTS}), ALLOW))
    m.apply(ev.PrivilegesGranted("admin", other, frozenset({P.MANAGE_GRANTS}), DENY))
    m.apply(ev.RoleGranted("mine", Principal.user("grantee")))
    e = Evaluator(m)
    roles = {u: [names(r) for r in visible(e, u, "list_roles", METALAKE)] for u in sorted(m.users)}
    assert roles == {
        "owner": ["admin", "held", "mine", "other"],
        "manager": ["admin", "held", "mine"],
        "member": ["held"],
        "grantee": ["mine", "other"],
        "nobody": [],
    }
    assert visible(e, "member", "list_users", METALAKE) == ["member"]
    assert visible(e, "manager", "list_users", METALAKE) == sorted(m.users)
    assert visible(e, "member", "list_groups", METALAKE) == ["g"]
    assert visible(e, "nobody", "list_groups", METALAKE) == []
    assert visible(e, "owner", "list_groups", METALAKE) == ["g", "h"]
    for user in m.users:
        for op in ("list_roles", "list_users", "list_groups"):
            assert visible(e, user, op, METALAKE) == item_by_item(e, user, op, METALAKE)


def names(item: Target) -> str:
    return item if isinstance(item, str) else item.name


#: operations judged on one object (no second object): what allowed_children may be asked
ON_OBJECTS = sorted(
    name
    for name, op in OPERATIONS.items()
    if op.other is None and (isinstance(op.target, SecurableType) or op.target in ("object", "securable"))
)


@settings(max_examples=60, deadline=None, database=None)
@given(listed_models())
def test_allowed_children_equals_judging_each_child(model: Model) -> None:
    """For every operation on objects, not only the listings' (Loadable and Can on the child
    itself are judged child by child): the same children as ``allowed_among``."""
    fast, slow = Evaluator(model), Evaluator(model)
    parents = sorted({METALAKE, *model.kids})
    for parent in parents:
        kinds = sorted({o.type for o in model.kids.get(parent, ())})
        for kind in kinds:
            children = {o for o in model.kids[parent] if o.type is kind}
            for operation in ON_OBJECTS:
                for user in (*USERS, "nobody"):
                    try:
                        expected = slow.allowed_among(user, operation, sorted(children))
                    except ModelError:
                        with pytest.raises(ModelError):
                            fast.allowed_children(user, operation, parent, children)
                        continue
                    got = fast.allowed_children(user, operation, parent, children)
                    assert sorted(got) == expected, (user, operation, parent, kind)
