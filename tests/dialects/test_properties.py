"""For random models: export, then decide in the dialect, is never more than pushdown's
evaluator; import of the export decides exactly as the exported statements do (import ∘
export is the identity on what the dialect expresses), and never more than the model."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.decide.evaluator import Evaluator
from pushdown.dialects.data import COMMON_OPERATIONS
from pushdown.dialects.databricks_hms import DIALECT as HMS
from pushdown.dialects.evaluate import State
from pushdown.dialects.exporting import export, probes, target
from pushdown.dialects.importing import to_model
from pushdown.dialects.render import statements
from pushdown.dialects.singdata import DIALECT as SD
from pushdown.dialects.sql import read
from pushdown.dialects.unity_catalog import DIALECT as UC
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

USERS = ("u1", "u2", "u3")
OBJECTS = [
    ObjectRef.parse(t)
    for t in (
        "catalog c",
        "schema c.s",
        "schema c.`x.y`",
        "table c.s.t",
        "table c.s.`a b`",
        "table c.`x.y`.t",
    )
]
PRIVS = ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE", "CREATE_SCHEMA")
GROUP, MEMBERS = "g", ("u1", "u2")
GRANT = st.tuples(
    st.sampled_from((*USERS, GROUP)),
    st.sampled_from(OBJECTS),
    st.sampled_from(PRIVS),
    st.sampled_from(("ALLOW", "ALLOW", "DENY")),
)
OWNER = st.tuples(st.sampled_from(OBJECTS), st.sampled_from(USERS))


def build(
    grants: list[tuple[str, ObjectRef, str, str]],
    owners: list[tuple[ObjectRef, str]],
    gated: set[str] | None = None,
) -> Model:
    """A model of three users and a group of two; the ``gated`` users pass both gates of catalog c."""
    gates = [(u, OBJECTS[0], p, "ALLOW") for u in sorted(gated or ()) for p in ("USE_CATALOG", "USE_SCHEMA")]
    grants = gates + list(grants)
    m = Model()

    def do(events: list) -> None:  # type: ignore[type-arg]
        for e in events:
            m.apply(e)

    for u in USERS:
        do(ch.add_user(m, u))
        do(ch.create_role(m, f"r_{u}"))
        do(ch.grant_role(m, f"r_{u}", Principal.user(u)))
    do(ch.add_group(m, GROUP, MEMBERS))
    do(ch.create_role(m, f"r_{GROUP}"))
    do(ch.grant_role(m, f"r_{GROUP}", Principal.group(GROUP)))
    for obj in OBJECTS:
        do(ch.create_object(m, obj))
    for u, obj, p, cond in grants:
        if obj.type.value in {"catalog", "schema", "table"} and obj.type in _grantable(p):
            do(ch.grant_privileges(m, f"r_{u}", obj, [p], cond))
    for obj, u in owners:
        do(ch.set_owner(m, obj, u))
    return m


def _grantable(p: str):  # type: ignore[no-untyped-def]
    from pushdown.model.privileges import Privilege

    return Privilege(p).securable_types


def decisions_of_model(model: Model, dialect) -> set[tuple[str, str, ObjectRef]]:  # type: ignore[no-untyped-def]
    ev = Evaluator(model)
    return {
        (u, op, obj)
        for u in USERS
        for obj in probes(model)
        for op in COMMON_OPERATIONS
        if op in dialect.operations
        and target(op, obj)
        and u in model.users
        and ev.authorize(u, COMMON_OPERATIONS[op], obj, explain=False).allowed
    }


def decisions_of_state(state: State, model: Model) -> set[tuple[str, str, ObjectRef]]:
    d = state.dialect
    return {
        (u, op, obj)
        for u in USERS
        for obj in probes(model)
        for op in COMMON_OPERATIONS
        if op in d.operations
        and target(op, obj)
        and state.allowed(u, [GROUP] if u in MEMBERS else [], op, (d.object_types[obj.type.value], obj.names))
    }


COUNTS: dict[str, list[int]] = {}


def check(dialect, grants, owners, gated) -> None:  # type: ignore[no-untyped-def]
    model = build(grants, owners, gated)
    text = "\n".join(statements(dialect, export(dialect, model)))
    script = read(dialect, text)
    if GROUP in script.kinds:  # the statements do not say it: pushdown import --group g
        script.kinds[GROUP] = "group"
    state = State(dialect, script.grants, script.owners)
    allowed_model = decisions_of_model(model, dialect)
    allowed_dialect = decisions_of_state(state, model)
    assert allowed_dialect <= allowed_model, (text, allowed_dialect - allowed_model)
    counts = COUNTS.setdefault(dialect.name, [0, 0, 0])
    counts[0] += 1
    counts[1] += len(allowed_model)
    counts[2] += len(allowed_dialect)
    back = to_model(dialect, script).model
    for obj in model.objects:  # the same objects, so that the probes are the same
        if obj not in back.objects:
            for node in obj.path[1:]:
                if node not in back.objects:
                    back.apply(ch.create_object(back, node)[0])
    for u in USERS:
        if u not in back.users:
            back.apply(ch.add_user(back, u)[0])
    for u in MEMBERS if GROUP in back.groups else ():
        back.apply(ch.add_member(back, GROUP, u)[0])
    allowed_back = decisions_of_model(back, dialect)
    assert allowed_back <= allowed_model, (text, allowed_back - allowed_model)
    if not owners:
        # what the model cannot say is not expected back: reading metadata only (describe),
        # and writing without reading (legacy MODIFY without SELECT)
        exact = {
            d
            for d in allowed_back ^ allowed_dialect
            if d[1] != "describe" and not (d[1] == "modify" and (d[0], "select", d[2]) not in allowed_dialect)
        }
        assert not exact, (text, exact)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.lists(GRANT, max_size=8), st.lists(OWNER, max_size=2), st.sets(st.sampled_from(USERS)))
def test_databricks_legacy(grants, owners, gated) -> None:  # type: ignore[no-untyped-def]
    check(HMS, grants, owners, gated)


@SETTINGS
@given(st.lists(GRANT, max_size=8), st.lists(OWNER, max_size=2), st.sets(st.sampled_from(USERS)))
def test_unity_catalog(grants, owners, gated) -> None:  # type: ignore[no-untyped-def]
    check(UC, grants, owners, gated)


@SETTINGS
@given(st.lists(GRANT, max_size=8), st.lists(OWNER, max_size=2), st.sets(st.sampled_from(USERS)))
def test_singdata(grants, owners, gated) -> None:  # type: ignore[no-untyped-def]
    check(SD, grants, owners, gated)


def test_the_examples_decide_something() -> None:
    """Run after the three above (file order): the random models were not all empty."""
    for name, (examples, model_allows, dialect_allows) in COUNTS.items():
        print(
            f"{name}: {examples} examples, {model_allows} decisions allowed by the model, "
            f"{dialect_allows} by the export"
        )
        assert dialect_allows > 0, name
