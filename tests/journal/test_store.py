"""The journal store: events round-trip, tables agree with the in-memory model, all or nothing.

The central property draws random histories of changes (users, groups, members, roles,
ALLOW/DENY grants, role grants, owners, objects created/renamed/dropped, removals) with
hostile names, skips the ones ``pushdown.model.changes`` rejects, commits the rest, and checks
after every commit that ``Store.load()`` rebuilds exactly the in-memory model and that
the journal holds the same events under strictly increasing sequence numbers.
"""

from __future__ import annotations

import copy
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.app.service import AccessControl
from pushdown.errors import ModelError
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.events import EVENT_TYPES, event_from_json
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from tests.builders import index_of, snapshot
from tests.histories import commit, draw_history

T = SecurableType
P = Privilege
ALLOW, DENY = Condition.ALLOW, Condition.DENY
HISTORIES = settings(max_examples=80, deadline=None, database=None)
TABLES = (
    "users",
    "groups_",
    "members",
    "roles",
    "grants",
    "assignments",
    "owners",
    "objects",
    "service_admins",
    "journal",
    "meta",
    "cursors",
)

# -- helpers ----------------------------------------------------------------------------


def dump(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, for 'nothing was written' checks."""
    return {t: sorted(store.db.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES}


@pytest.fixture
def ac() -> Iterator[AccessControl]:
    control = AccessControl(Store(":memory:"), push=False)
    yield control
    control.close()


# -- events survive JSON ----------------------------------------------------------------

H = "we`ird. ' \" name é漢🙂 "
HOSTILE_TABLE = ObjectRef(T.TABLE, ("c.at", "`s`", " t "))
EXAMPLES: list[ev.Event] = [
    ev.UserAdded(H),
    ev.UserRemoved(H),
    ev.GroupAdded(H),
    ev.GroupRemoved(H),
    ev.GroupMemberAdded(H, "u.`x`"),
    ev.GroupMemberRemoved("g h", H),
    ev.RoleCreated(H),
    ev.RoleDeleted(H),
    ev.PrivilegesGranted(H, HOSTILE_TABLE, frozenset({P.SELECT_TABLE, P.MODIFY_TABLE}), ALLOW),
    ev.PrivilegesRevoked(H, METALAKE, frozenset({P.USE_CATALOG}), DENY),
    ev.RoleGranted(H, Principal.user(" sp ace ")),
    ev.RoleRevoked(H, Principal.group(H)),
    ev.OwnerSet(ObjectRef(T.ROLE, (H,)), H, None),
    ev.OwnerSet(HOSTILE_TABLE, None, H),
    ev.OwnerSet(METALAKE, "x", "y"),
    ev.ServiceAdminsSet(frozenset({H, "a"})),
    ev.ServiceAdminsSet(frozenset()),
    ev.ObjectCreated(ObjectRef(T.CATALOG, ("",)), (("backend", H), ("k.`", "")), H),
    ev.ObjectCreated(ObjectRef(T.TAG, (H,))),
    ev.ObjectRenamed(ObjectRef(T.SCHEMA, ("c", "a.b")), ObjectRef(T.SCHEMA, ("c", "`"))),
    ev.ObjectDropped(ObjectRef(T.JOB_TEMPLATE, (H,))),
    ev.ExternalMembersChanged(H, frozenset({H, "x"}), frozenset({"gone"})),
]


def test_examples_cover_every_event_type() -> None:
    assert {type(e) for e in EXAMPLES} == set(EVENT_TYPES.values())
    assert all(EVENT_TYPES[e.name] is type(e) for e in EXAMPLES)


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: e.name)
def test_event_json_round_trip(event: ev.Event) -> None:
    text = event.to_json()
    back = event_from_json(text)
    assert back == event
    assert type(back) is type(event)
    assert back.to_json() == text


def test_journal_returns_the_events_it_was_given() -> None:
    store = Store(":memory:")
    try:
        seqs = commit(store, EXAMPLES)
        assert seqs == sorted(seqs) and len(set(seqs)) == len(EXAMPLES)
        assert store.events_since(0) == list(zip(seqs, EXAMPLES, strict=True))
        names = [n for (n,) in store.db.execute("SELECT name FROM journal ORDER BY seq")]
        assert names == [e.name for e in EXAMPLES]
    finally:
        store.close()


text = st.text(st.one_of(st.sampled_from(list(".` '\"")), st.characters()), max_size=6)
hostile_refs = st.sampled_from(list(T)).flatmap(
    lambda k: st.lists(text, min_size=k.depth, max_size=k.depth).map(lambda n: ObjectRef(k, tuple(n)))
)
privilege_sets = st.frozensets(st.sampled_from(list(P)), min_size=1)
hostile_principals = st.builds(Principal, st.sampled_from(list(PrincipalKind)), text)
any_event = st.one_of(
    st.builds(ev.UserAdded, text),
    st.builds(ev.UserRemoved, text),
    st.builds(ev.GroupAdded, text),
    st.builds(ev.GroupRemoved, text),
    st.builds(ev.GroupMemberAdded, text, text),
    st.builds(ev.GroupMemberRemoved, text, text),
    st.builds(ev.RoleCreated, text),
    st.builds(ev.RoleDeleted, text),
    st.builds(ev.PrivilegesGranted, text, hostile_refs, privilege_sets, st.sampled_from(Condition)),
    st.builds(ev.PrivilegesRevoked, text, hostile_refs, privilege_sets, st.sampled_from(Condition)),
    st.builds(ev.RoleGranted, text, hostile_principals),
    st.builds(ev.RoleRevoked, text, hostile_principals),
    st.builds(ev.OwnerSet, hostile_refs, st.none() | text, st.none() | text),
    st.builds(ev.ServiceAdminsSet, st.frozensets(text, max_size=3)),
    st.builds(
        ev.ObjectCreated,
        hostile_refs,
        st.lists(st.tuples(text, text), max_size=3).map(tuple),
        st.none() | text,
    ),
    st.builds(ev.ObjectRenamed, hostile_refs, hostile_refs),
    st.builds(ev.ObjectDropped, hostile_refs),
)


@settings(max_examples=300, deadline=None, database=None)
@given(any_event)
def test_any_event_json_round_trip(event: ev.Event) -> None:
    assert event_from_json(event.to_json()) == event


# -- random histories --------------------------------------------------------------------


@HISTORIES
@given(st.data())
def test_store_load_equals_model_after_every_commit(data: st.DataObject) -> None:
    store = Store(":memory:")
    model = Model()
    try:
        last = 0
        for change in draw_history(data, model, data.draw(st.integers(min_value=10, max_value=40))):
            if change is None:
                continue
            fn, args = change
            try:
                events = fn(model, *args)
            except ModelError:
                continue
            seqs = commit(store, events)
            for event in events:
                model.apply(event)
            assert len(seqs) == len(events)
            assert all(a < b for a, b in zip([last, *seqs], seqs, strict=False))
            assert store.events_since(last) == list(zip(seqs, events, strict=True))
            last = store.last_seq()
            assert model.by_object == index_of(model)
            loaded = store.load()
            assert snapshot(loaded) == snapshot(model)
            assert loaded.by_object == index_of(loaded)
        # the journal alone rebuilds the same model
        replayed = Model()
        for _, event in store.events_since(0):
            replayed.apply(event)
        assert snapshot(replayed) == snapshot(model)
    finally:
        store.close()


@HISTORIES
@given(st.data())
def test_access_control_commits_all_or_nothing(data: st.DataObject) -> None:
    control = AccessControl(Store(":memory:"), push=False)
    store = control.store
    try:
        for change in draw_history(data, control.model, data.draw(st.integers(min_value=10, max_value=30))):
            if change is None:
                continue
            fn, args = change
            before, rows, seq = snapshot(control.model), dump(store), store.last_seq()
            try:
                result = control.change(lambda m, fn=fn, args=args: fn(m, *args))
            except ModelError:
                assert dump(store) == rows
                assert snapshot(control.model) == before
                continue
            assert list(result.seqs) == [s for s, _ in store.events_since(seq)]
            assert store.last_seq() == (result.seqs[-1] if result.seqs else seq)
            assert snapshot(store.load()) == snapshot(control.model)
    finally:
        control.close()


# -- invalid changes write nothing --------------------------------------------------------


def _populate(control: AccessControl) -> None:
    control.add_user("alice")
    control.add_user("bob")
    control.add_group("g", ["alice"])
    control.create_role("r", owner="alice")
    control.grant_role("r", "group g")
    control.create_object("catalog c", "alice", {"backend": "ranger"})
    control.create_object("schema c.s", "bob")
    control.grant_privileges("r", "schema c.s", ["SELECT_TABLE"])


@pytest.mark.parametrize(
    "attempt",
    [
        pytest.param(lambda c: c.grant_privileges("r", "table nocat.s.t", ["SELECT_TABLE"]), id="no-catalog"),
        pytest.param(
            lambda c: c.grant_privileges("r", "catalog c", ["SELECT_TABLE", "CREATE_ROLE"]),
            id="not-grantable-there",
        ),
        pytest.param(lambda c: c.grant_privileges("nope", "catalog c", ["USE_CATALOG"]), id="unknown-role"),
        pytest.param(lambda c: c.add_user("alice"), id="duplicate-user"),
        pytest.param(lambda c: c.add_group("g2", ["alice", "ghost"]), id="unknown-member"),
        pytest.param(lambda c: c.create_object("table c.nos.t"), id="no-parent"),
        pytest.param(lambda c: c.create_object("catalog c"), id="duplicate-object"),
        pytest.param(lambda c: c.set_owner("catalog c", "g", "group"), id="group-owner"),
        pytest.param(lambda c: c.rename_object("schema c.s", "x\x00y"), id="control-char"),
        pytest.param(lambda c: c.grant_role("r", "role r"), id="role-to-role"),
        pytest.param(lambda c: c.set_service_admins(["alice", "ghost"]), id="unknown-admin"),
    ],
)
def test_invalid_change_writes_nothing(ac: AccessControl, attempt: Callable[[AccessControl], object]) -> None:
    _populate(ac)
    before, rows = snapshot(ac.model), dump(ac.store)
    with pytest.raises(ModelError):
        attempt(ac)
    assert dump(ac.store) == rows
    assert snapshot(ac.model) == before
    assert snapshot(ac.store.load()) == before


def test_change_failing_halfway_through_the_model_writes_nothing(ac: AccessControl) -> None:
    _populate(ac)
    before, rows = snapshot(ac.model), dump(ac.store)

    def build(model: Model) -> list[ev.Event]:
        # the second event names a group that does not exist: Model.apply raises on it
        return [ev.UserAdded("carol"), ev.GroupMemberAdded("no such group", "carol")]

    with pytest.raises(KeyError):
        ac.change(build)
    assert dump(ac.store) == rows
    assert snapshot(ac.model) == before
    assert "carol" not in ac.model.users


def test_change_failing_halfway_through_the_store_leaves_model_unchanged(ac: AccessControl) -> None:
    _populate(ac)
    before, rows = snapshot(ac.model), dump(ac.store)

    def build(model: Model) -> list[ev.Event]:
        # both apply to the in-memory model; the store's users table rejects the second
        return [ev.UserAdded("carol"), ev.UserAdded("carol")]

    with pytest.raises(sqlite3.IntegrityError):
        ac.change(build)
    assert dump(ac.store) == rows
    assert snapshot(ac.model) == before  # fails: ac.model.users holds "carol"


def _rename_collision(control: AccessControl) -> None:
    """Grants on ``table c.s.x`` and on the unregistered ``table c.t.x`` (allowed: catalog c exists)."""
    control.create_role("r")
    control.create_object("catalog c")
    control.create_object("schema c.s")
    control.grant_privileges("r", "table c.s.x", ["SELECT_TABLE"])
    control.grant_privileges("r", "table c.t.x", ["SELECT_TABLE"])


def test_rename_onto_an_identical_grant_is_rejected_or_merged(ac: AccessControl) -> None:
    _rename_collision(ac)
    store, model = ac.store, copy.deepcopy(ac.model)
    try:
        events = ch.rename_object(model, ObjectRef.of("schema", "c.s"), "t")
    except ModelError:
        return  # rejecting the rename is fine
    for event in events:
        model.apply(event)
    commit(store, events)  # raises sqlite3.IntegrityError
    assert snapshot(store.load()) == snapshot(model)


def test_failed_rename_leaves_access_control_model_unchanged(ac: AccessControl) -> None:
    _rename_collision(ac)
    before, rows = snapshot(ac.model), dump(ac.store)
    with pytest.raises(Exception):  # noqa: B017 - ModelError expected, IntegrityError today
        ac.rename_object("schema c.s", "t")
    assert dump(ac.store) == rows
    assert snapshot(ac.model) == before


# -- cursors ------------------------------------------------------------------------------


def test_backend_cursors_are_independent(tmp_path: Path) -> None:
    path = tmp_path / "pushdown.db"
    store = Store(path)
    try:
        seqs = []
        for user in ("a", "b", "c", "d"):
            seqs += commit(store, ch.add_user(store.load(), user))
        assert store.cursor("ranger") == 0 and store.cursor("mysql") == 0
        store.set_cursor("ranger", seqs[2])
        store.set_cursor("mysql", seqs[0])
        assert (store.cursor("ranger"), store.cursor("mysql"), store.cursor("hms")) == (seqs[2], seqs[0], 0)
        store.set_cursor("ranger", seqs[3])
        assert store.cursor("mysql") == seqs[0]
        assert store.cursor("ranger") == seqs[3]
        assert [e for _, e in store.events_since(store.cursor("mysql"))] == [
            ev.UserAdded("b"),
            ev.UserAdded("c"),
            ev.UserAdded("d"),
        ]
        assert store.events_since(store.cursor("ranger")) == []
        assert store.events_since(store.cursor("hms")) == [
            (s, ev.UserAdded(u)) for s, u in zip(seqs, "abcd", strict=True)
        ]
        assert store.events_since(seqs[0], limit=2) == [
            (seqs[1], ev.UserAdded("b")),
            (seqs[2], ev.UserAdded("c")),
        ]
        # a cursor is not a journal entry
        assert store.last_seq() == seqs[-1]
    finally:
        store.close()
    reopened, other = Store(path), Store(path)
    try:
        assert reopened.cursor("ranger") == seqs[3] and reopened.cursor("mysql") == seqs[0]
        other.set_cursor("hms", seqs[1])
        assert reopened.cursor("hms") == seqs[1]
    finally:
        reopened.close()
        other.close()


# -- two processes on one file -------------------------------------------------------------


def test_two_stores_on_one_file_see_each_others_commits(tmp_path: Path) -> None:
    path = tmp_path / "pushdown.db"
    one, two = Store(path), Store(path)
    try:
        commit(one, ch.add_user(one.load(), "alice"))
        assert two.load().users == {"alice"}
        assert two.last_seq() == one.last_seq() == 1
        commit(two, ch.add_group(two.load(), "g", ["alice"]))
        assert one.load().groups == {"g": {"alice"}}
        assert [e for _, e in one.events_since(1)] == [ev.GroupAdded("g"), ev.GroupMemberAdded("g", "alice")]
    finally:
        one.close()
        two.close()


def test_access_control_reloads_after_another_process_wrote(tmp_path: Path) -> None:
    path = tmp_path / "pushdown.db"
    first = AccessControl(Store(path), push=False)
    second = AccessControl(Store(path), push=False)
    raw = Store(path)
    try:
        first.add_user("alice")
        assert second.model.users == {"alice"}
        commit(raw, ch.add_user(raw.load(), "bob"))
        assert first.model.users == {"alice", "bob"}
        # a change builds on the other process's writes, not on a stale model
        first.add_group("g", ["bob"])
        with pytest.raises(ModelError, match="already exists"):
            second.add_group("g")
        second.add_member("g", "alice")
        assert snapshot(first.model) == snapshot(second.model) == snapshot(raw.load())
        assert first.model.groups == {"g": {"alice", "bob"}}
    finally:
        first.close()
        second.close()
        raw.close()


def test_access_control_sees_metalake_renamed_by_another_process(tmp_path: Path) -> None:
    path = tmp_path / "pushdown.db"
    first = AccessControl(Store(path), push=False)
    second = AccessControl(Store(path), push=False)
    try:
        first.add_user("alice")
        assert second.model.users == {"alice"}
        target = copy.deepcopy(first.model)
        target.metalake = "lake2"
        first.load_model(target)
        assert first.store.load().metalake == "lake2"
        assert second.model.metalake == "lake2"  # fails: still "metalake"
    finally:
        first.close()
        second.close()


# -- cascades ---------------------------------------------------------------------------


def test_removing_a_user_emits_one_event_per_fact_and_leaves_no_trace(ac: AccessControl) -> None:
    alice = "al.`ice` "
    ac.add_user(alice)
    ac.add_user("bob")
    ac.add_group("g1", [alice, "bob"])
    ac.add_group("g2", [alice])
    ac.create_role("r1", owner=alice)
    ac.create_role("r2")
    ac.grant_role("r1", f"user {alice}")
    ac.grant_role("r2", f"user {alice}")
    ac.grant_role("r2", "user bob")
    ac.grant_role("r1", "group g2")
    ac.create_object("catalog c", alice)
    ac.create_object("schema c.s", alice)
    ac.create_object("catalog d", "bob")
    ac.set_owner("metalake", alice)
    ac.set_service_admins([alice, "bob"])

    result = ac.remove_user(alice)
    ref = ObjectRef.of
    expected = {
        ev.GroupMemberRemoved("g1", alice),
        ev.GroupMemberRemoved("g2", alice),
        ev.RoleRevoked("r1", Principal.user(alice)),
        ev.RoleRevoked("r2", Principal.user(alice)),
        ev.OwnerSet(METALAKE, None, alice),
        ev.OwnerSet(ref("catalog", "c"), None, alice),
        ev.OwnerSet(ref("schema", "c.s"), None, alice),
        ev.OwnerSet(ref("role", "r1"), None, alice),
        ev.ServiceAdminsSet(frozenset({"bob"})),
        ev.UserRemoved(alice),
    }
    assert len(result.events) == len(expected)
    assert set(result.events) == expected
    assert result.events[-1] == ev.UserRemoved(alice)
    assert [e for _, e in ac.store.events_since(result.seqs[0] - 1)] == list(result.events)

    for model in (ac.model, ac.store.load()):
        assert alice not in model.users
        assert all(alice not in members for members in model.groups.values())
        assert not model.user_roles.get(alice) and not model.user_groups.get(alice)
        assert alice not in model.owners.values()
        assert alice not in model.service_admins
        assert model.groups == {"g1": {"bob"}, "g2": set()}
        assert model.group_roles["g2"] == {"r1"} and model.user_roles["bob"] == {"r2"}
        assert model.owners == {ref("catalog", "d"): "bob"}
        assert model.service_admins == {"bob"}
    rows = dump(ac.store)
    del rows["journal"]
    assert alice not in repr(rows)
    assert snapshot(ac.store.load()) == snapshot(ac.model)


def _tree(control: AccessControl) -> None:
    control.add_user("alice")
    control.create_role("r")
    control.create_role("r2")
    for obj in (
        "catalog c",
        "schema c.s",
        "table c.s.t",
        "topic c.s.t",
        "schema c.`s.t`",
        "table c.`s.t`.x",
        "schema c.s2",
        "table c.s2.t",
    ):
        control.create_object(obj, "alice")
    control.grant_privileges("r", "catalog c", ["USE_CATALOG"])
    control.grant_privileges("r", "schema c.s", ["SELECT_TABLE", "USE_SCHEMA"])
    control.grant_privileges("r", "table c.s.t", ["SELECT_TABLE", "MODIFY_TABLE"])
    control.grant_privileges("r2", "table c.s.unregistered", ["SELECT_TABLE"], "DENY")
    control.grant_privileges("r2", "topic c.s.t", ["CONSUME_TOPIC"])
    control.grant_privileges("r", "schema c.`s.t`", ["SELECT_TABLE"])
    control.grant_privileges("r", "table c.`s.t`.x", ["SELECT_TABLE"])
    control.grant_privileges("r", "table c.s2.t", ["SELECT_TABLE"])


def _grants(model: Model) -> set[tuple[str, str, str, str]]:
    return {
        (r, str(g.object), g.privilege.value, g.condition.value) for r, gs in model.roles.items() for g in gs
    }


def test_dropping_a_schema_revokes_grants_below_and_drops_its_objects(ac: AccessControl) -> None:
    _tree(ac)
    result = ac.drop_object("schema c.s")
    ref = ObjectRef.of
    revoked = [e for e in result.events if isinstance(e, ev.PrivilegesRevoked)]
    assert {
        (e.role, str(e.object), *(p.value for p in e.privileges), e.condition.value) for e in revoked
    } == {
        ("r", "schema c.s", "SELECT_TABLE", "ALLOW"),
        ("r", "schema c.s", "USE_SCHEMA", "ALLOW"),
        ("r", "table c.s.t", "SELECT_TABLE", "ALLOW"),
        ("r", "table c.s.t", "MODIFY_TABLE", "ALLOW"),
        ("r2", "table c.s.unregistered", "SELECT_TABLE", "DENY"),
        ("r2", "topic c.s.t", "CONSUME_TOPIC", "ALLOW"),
    }
    assert len(revoked) == 6  # one event per grant
    dropped = [e.object for e in result.events if isinstance(e, ev.ObjectDropped)]
    assert set(dropped) == {ref("schema", "c.s"), ref("table", "c.s.t"), ref("topic", "c.s.t")}
    assert dropped[-1] == ref("schema", "c.s")  # leaves before their schema
    cleared = {e.object for e in result.events if isinstance(e, ev.OwnerSet)}
    assert cleared == set(dropped)
    assert all(isinstance(e, (ev.PrivilegesRevoked, ev.ObjectDropped, ev.OwnerSet)) for e in result.events)

    kept = {
        ref("catalog", "c"),
        ref("schema", "c.`s.t`"),
        ref("table", "c.`s.t`.x"),
        ref("schema", "c.s2"),
        ref("table", "c.s2.t"),
    }
    for model in (ac.model, ac.store.load()):
        assert set(model.objects) == kept
        assert set(model.owners) == kept
        assert _grants(model) == {
            ("r", "catalog c", "USE_CATALOG", "ALLOW"),
            ("r", "schema c.`s.t`", "SELECT_TABLE", "ALLOW"),
            ("r", "table c.`s.t`.x", "SELECT_TABLE", "ALLOW"),
            ("r", "table c.s2.t", "SELECT_TABLE", "ALLOW"),
        }
        assert model.by_object == index_of(model)
        assert not model.grants_within(ref("schema", "c.s"))
    assert snapshot(ac.store.load()) == snapshot(ac.model)


def test_renaming_a_schema_moves_grants_and_owners_below_it(ac: AccessControl) -> None:
    _tree(ac)
    ac.set_owner("table c.s.t", "alice")
    ac.add_user("bob")
    ac.set_owner("schema c.s", "bob")
    result = ac.rename_object("schema c.s", "n.`ew")
    ref = ObjectRef.of
    new = ObjectRef(T.SCHEMA, ("c", "n.`ew"))
    assert result.events == (ev.ObjectRenamed(ref("schema", "c.s"), new),)

    for model in (ac.model, ac.store.load()):
        assert ref("schema", "c.s") not in model.objects
        assert model.owners[new] == "bob"
        assert model.owners[ObjectRef(T.TABLE, ("c", "n.`ew", "t"))] == "alice"
        assert model.owners[ObjectRef(T.TOPIC, ("c", "n.`ew", "t"))] == "alice"
        assert model.objects[ObjectRef(T.TABLE, ("c", "n.`ew", "t"))] == {}
        assert _grants(model) == {
            ("r", "catalog c", "USE_CATALOG", "ALLOW"),
            ("r", "schema c.`n.``ew`", "SELECT_TABLE", "ALLOW"),
            ("r", "schema c.`n.``ew`", "USE_SCHEMA", "ALLOW"),
            ("r", "table c.`n.``ew`.t", "SELECT_TABLE", "ALLOW"),
            ("r", "table c.`n.``ew`.t", "MODIFY_TABLE", "ALLOW"),
            ("r2", "table c.`n.``ew`.unregistered", "SELECT_TABLE", "DENY"),
            ("r2", "topic c.`n.``ew`.t", "CONSUME_TOPIC", "ALLOW"),
            # the schema whose one segment is "s.t" is not below "c.s"
            ("r", "schema c.`s.t`", "SELECT_TABLE", "ALLOW"),
            ("r", "table c.`s.t`.x", "SELECT_TABLE", "ALLOW"),
            ("r", "table c.s2.t", "SELECT_TABLE", "ALLOW"),
        }
        assert ref("schema", "c.`s.t`") in model.objects and ref("table", "c.`s.t`.x") in model.objects
        assert model.by_object == index_of(model)
        assert ref("schema", "c.s") not in model.by_object
    assert snapshot(ac.store.load()) == snapshot(ac.model)


def test_renaming_a_catalog_moves_everything_below_it(ac: AccessControl) -> None:
    _tree(ac)
    ac.create_object("catalog d")
    ac.grant_privileges("r", "catalog d", ["USE_CATALOG"])
    ac.rename_object("catalog c", "e")
    for model in (ac.model, ac.store.load()):
        assert {o.names[0] for o in model.objects} == {"d", "e"}
        assert {g.object.names[0] for gs in model.roles.values() for g in gs if g.object.names} == {"d", "e"}
        assert ("r2", "table e.s.unregistered", "SELECT_TABLE", "DENY") in _grants(model)
        assert all(o.names[0] == "e" for o in model.owners)
    assert snapshot(ac.store.load()) == snapshot(ac.model)


def test_version_and_metas_read_in_one_query_what_the_single_reads_give(tmp_path):
    store = Store(tmp_path / "pd.db")
    try:
        assert store.version() == (0, None)
        assert store.get_metas(("metalake", "metalake_comment")) == {}
        with store.write_lock():
            store.set_meta("metalake", "lake")
            store.set_meta("metalake_comment", "c")
        assert store.version() == (store.last_seq(), "lake")
        assert store.get_metas(("metalake", "metalake_comment", "nothing")) == {
            "metalake": "lake",
            "metalake_comment": "c",
        }
    finally:
        store.close()
