"""Random histories synced by scope only, in a catalog of tables alone (issue 30): no full
sync between the steps, so whatever a sync keeps for the next (the kept classes and the
users taken over in their databases, a user's kept signature while the model's stamps
stand, the service definitions while the policy versions stand, the read-back's facts and
hand-made sets) lives through the whole history. With no topic or fileset the scoped
compile takes over the users whose classes are kept (``HiveClasses.split``), which the
histories of ``test_ranger_histories.py`` (a topic and a fileset in every world) never do.

The steps: grants and revokes (ALLOW and DENY, gates included), memberships of users and
of the group, the group's members, owners, tables created, dropped and renamed, users,
roles and the group removed and made again, service admins, and members the directory
adds to the group or takes out (the model a sync compiles is the members' view of the
store's model, and a dry run's view of the live model is made before each sync: it moves
the stamps the two share). After each scoped sync a plan over everything by a backend that
keeps nothing (a compile from scratch) is empty, and Ranger 2.9's own engine decides every
user, access and resource as the evaluator does."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.model.directory import enforced, with_members
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from tests.adversary import GROUP, histories, hostile_steps
from tests.builders import Builder

from .histories import applied, estate, events_for, judged, synced
from .world import backend_for

pytestmark = pytest.mark.ranger

USERS = ("u1", "u2", "u3", "u4")
ROLES = ("r1", "r2", "r3")
SCHEMAS = ("s1", "s2", "s3")
TABLES = ("a", "b")
OBJECTS = (
    "catalog c",
    *(f"schema c.{s}" for s in SCHEMAS),
    *(f"table c.{s}.{t}" for s in SCHEMAS for t in TABLES),
)
PRIVILEGES = ("USE_CATALOG", "USE_SCHEMA", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE")

steps = st.one_of(
    hostile_steps(
        roles=ROLES,
        users=USERS,
        objects=OBJECTS,
        unregistered=("table c.s1.x",),
        privileges=PRIVILEGES,
        schemas=SCHEMAS,
        tables=TABLES,
        external=True,
        rename=True,
        grant_weight=4,
    ),
    st.tuples(st.just("admins"), st.lists(st.sampled_from(USERS), max_size=2, unique=True)),
)


def start() -> Builder:
    b = estate(USERS, roles=ROLES, schemas=SCHEMAS, tables=("s1.a", "s2.b", "s3.a"))
    b.allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", "USE_SCHEMA", "SELECT_TABLE")
    b.allow("r2", "catalog c", "USE_CATALOG", "USE_SCHEMA").allow("r3", "catalog c", "USE_CATALOG")
    b.allow("r3", "schema c.s2", "USE_SCHEMA", "SELECT_TABLE").deny("r3", "table c.s2.b", "SELECT_TABLE")
    b.grant_role("r1", users=["u2"], groups=[GROUP]).grant_role("r2", users=["u3", "u4"])
    return b.grant_role("r3", users=["u4"])


def live(model: Model) -> Model:
    """The members' view of ``model`` a sync compiles, a dry run's view of the live model
    made first (the directory adding u3 to the group: it moves the stamps the two share)."""
    with_members(model, {GROUP: {"u3"}})
    return enforced(model)


def test_scoped_syncs_alone_over_random_histories_equal_a_compile_from_scratch_and_rangers_engine() -> None:
    @settings(max_examples=histories(20), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(steps, min_size=2, max_size=10))
    def run(history: list[tuple[Any, ...]]) -> None:
        with Standin() as standin:
            backend = backend_for(standin)
            for step, model in synced(backend, start().model, history, view=live):
                judged(standin, backend_for(standin), model, USERS, (history, step))

    run()


def test_a_scoped_sync_leaves_an_equal_roles_choice_as_a_compile_from_scratch() -> None:
    """r2 and r3 made to hold the same users, r3's DENY on c.s2.b; then r2 given a DENY on
    c.s1. The compile chose between equal roles by whether they held a DENY anywhere, so
    a compile from scratch then named pd_r2 in s2.b's deny item, which the sync of c.s1
    does not compile: the same users denied, but ``verify`` reported drift until a full
    sync. Equal roles are now chosen by name alone: the full plan stays empty."""
    history = [
        ("role_group", "r2", True),
        ("role_user", "r3", "u3", True),
        ("role_group", "r3", True),
        ("grant", "r2", "schema c.s1", "USE_SCHEMA", "DENY"),
    ]
    with Standin() as standin:
        backend = backend_for(standin)
        model = start().model
        reconcile(backend, model, Scope.everything())
        for step in history:
            reconcile(backend, model, applied(model, events_for(model, step)))
            judged(standin, backend_for(standin), model, USERS, step)
