"""The model's stamps (:attr:`Model.grants_moved`, :attr:`Model.roles_moved`): a role whose
stamp stands holds the grants it held when the stamp was read, and a user whose stamp
stands holds the roles it held then (directly and through groups), over random changes of
every kind; every stamp given is counted once (:attr:`Model.roles_stamped`,
:attr:`Model.grants_stamped`: a cache proves who alone was stamped by them) and the users
stamped since a count are those the log names (:meth:`Model.stamped_since`); the roster
count (:attr:`Model.roster_stamped`) stands only while no user or role came or went; a copy's
changes and the original's never share a stamp."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator

import pytest

from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model import state
from pushdown.model.directory import with_members
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

USERS = ("u1", "u2", "u3")
GROUPS = ("g1", "g2")
ROLES = ("r1", "r2", "r3")
OBJECTS = ("catalog c", "schema c.s", "table c.s.a", "schema c.t", "table c.t.a")
PRIVILEGES = {"catalog": "USE_CATALOG", "schema": "USE_SCHEMA", "table": "SELECT_TABLE"}


def _step(model: Model, rng: random.Random) -> list[ev.Event]:
    """One random change, as :mod:`pushdown.model.changes` makes it or as a bare event (a
    journal may hold either)."""
    user, group, role = rng.choice(USERS), rng.choice(GROUPS), rng.choice(ROLES)
    obj = ObjectRef.parse(rng.choice(OBJECTS))
    principal = Principal.user(user) if rng.random() < 0.6 else Principal.group(group)
    kinds: list[Callable[[], list[ev.Event]]] = [
        lambda: ch.add_user(model, user),
        lambda: ch.remove_user(model, user),
        lambda: [ev.UserRemoved(user)] if user in model.users else [],
        lambda: ch.add_group(model, group),
        lambda: ch.remove_group(model, group),
        lambda: [ev.GroupRemoved(group)] if group in model.groups else [],
        lambda: ch.add_member(model, group, user),
        lambda: ch.remove_member(model, group, user),
        lambda: ch.create_role(model, role),
        lambda: ch.delete_role(model, role),
        lambda: [ev.RoleDeleted(role)] if role in model.roles else [],
        lambda: ch.grant_role(model, role, principal),
        lambda: ch.revoke_role(model, role, principal),
        lambda: ch.grant_privileges(
            model, role, obj, [PRIVILEGES[obj.type.value]], rng.choice(("ALLOW", "DENY"))
        ),
        lambda: ch.revoke_privileges(
            model, role, obj, [PRIVILEGES[obj.type.value]], rng.choice(("ALLOW", "DENY"))
        ),
        lambda: ch.create_object(model, obj) if obj not in model.objects else ch.drop_object(model, obj),
        lambda: ch.rename_object(model, obj, rng.choice(("s", "t", "u", "a", "b"))),
    ]
    # principals come more often than they go, so most steps find what they name
    weights = [3, 1, 0.5, 3, 0.5, 0.5, 4, 2, 3, 0.5, 0.5, 6, 3, 6, 3, 2, 1]
    try:
        return rng.choices(kinds, weights)[0]()
    except ModelError:
        return []


def _roles(model: Model) -> dict[str, tuple[int | None, frozenset[str]]]:
    return {u: (model.roles_moved.get(u), frozenset(model.roles_of(u))) for u in USERS}


def _grants(model: Model) -> dict[str, tuple[int | None, frozenset[object]]]:
    return {r: (model.grants_moved.get(r), frozenset(model.roles.get(r, ()))) for r in ROLES}


def _stale(
    before: dict[str, tuple[int | None, frozenset[object]]],
    after: dict[str, tuple[int | None, frozenset[object]]],
) -> list[str]:
    """The names whose stamp stands (and was set) while what it vouches for moved."""
    return [
        k
        for k, (stamp, what) in after.items()
        if stamp is not None and before[k][0] == stamp and before[k][1] != what
    ]


class _Drawn:
    """The stamps' counter, counting the stamps drawn."""

    def __init__(self, stamps: Iterator[int]) -> None:
        self.stamps, self.drawn = stamps, 0

    def __iter__(self) -> _Drawn:
        return self

    def __next__(self) -> int:
        self.drawn += 1
        return next(self.stamps)


def play(seed: int, steps: int = 600) -> tuple[int, int]:
    """Random changes from an empty model; after each, no stamp stands over moved roles or
    grants, and the counts moved by every stamp drawn, those of each table by at least the
    names newly stamped there. Returns (users' roles moved, roles' grants moved): what the
    stamps vouched for."""
    rng = random.Random(seed)
    model = Model()
    for text in OBJECTS[:2]:
        for event in ch.create_object(model, ObjectRef.parse(text)):
            model.apply(event)
    moved = [0, 0]
    drawn = _Drawn(state._STAMPS)
    state._STAMPS = drawn
    try:
        for _ in range(steps):
            _play_step(model, rng, moved, drawn)
    finally:
        state._STAMPS = drawn.stamps
    return moved[0], moved[1]


def _play_step(model: Model, rng: random.Random, moved: list[int], drawn: _Drawn) -> None:
    roles, grants = _roles(model), _grants(model)
    counted, stamped = (model.roles_stamped, model.grants_stamped), drawn.drawn
    users_at, roles_at = dict(model.roles_moved), dict(model.grants_moved)
    roster, who = model.roster_stamped, (set(model.users), set(model.roles))
    for event in _step(model, rng):
        model.apply(event)
    # the roster count stands only while no user and no role came or went
    if model.roster_stamped == roster:
        assert (model.users, set(model.roles)) == who, (event, who)
    # every stamp drawn is counted once, in the table it went to (a proof by the
    # counts reads "as many stamps as names newly stamped": each once, nobody else)
    new_users = sum(model.roles_moved[u] != users_at.get(u) for u in model.roles_moved)
    new_roles = sum(model.grants_moved[r] != roles_at.get(r) for r in model.grants_moved)
    users_counted = model.roles_stamped - counted[0]
    roles_counted = model.grants_stamped - counted[1]
    assert users_counted + roles_counted == drawn.drawn - stamped, (event, users_counted, roles_counted)
    assert users_counted >= new_users and roles_counted >= new_roles, (event, new_users, new_roles)
    # the log of stamps names exactly the users stamped since the count (or is too short)
    since = model.stamped_since(counted[0])
    stamped_now = {u for u in model.roles_moved if model.roles_moved[u] != users_at.get(u)}
    if since is None:
        assert counted[0] < model.stamp_log_base, (event, counted[0], model.stamp_log_base)
    else:
        assert since == stamped_now, (event, since, stamped_now)
    assert model.stamped_since(model.roles_stamped) == frozenset()
    after_roles, after_grants = _roles(model), _grants(model)
    assert not _stale(roles, after_roles), (event, roles, after_roles)  # type: ignore[arg-type]
    assert not _stale(grants, after_grants), (event, grants, after_grants)  # type: ignore[arg-type]
    moved[0] += sum(roles[u][1] != after_roles[u][1] for u in USERS)
    moved[1] += sum(grants[r][1] != after_grants[r][1] for r in ROLES)
    # every user and role the model holds was stamped by the events that made it
    assert all(u in model.roles_moved for u in model.users)
    assert all(r in model.grants_moved for r in model.roles)


def test_a_stamp_that_stands_vouches_for_the_roles_and_grants_it_was_read_with() -> None:
    moved = [play(seed) for seed in range(8)]
    users, roles = sum(u for u, _ in moved), sum(r for _, r in moved)
    assert users > 100 and roles > 40, moved  # the histories moved both


#: a handler that forgets to stamp: the comparison above must catch each
FORGETFUL = {
    "a group's member added": ("_on_group_member_added", "roles"),
    "a role granted to a group": ("_moved_assignment", "roles"),
    "a role deleted": ("_on_role_deleted", "both"),
    "a privilege revoked": ("_on_privileges_revoked", "grants"),
}


@pytest.mark.parametrize("handler, _", FORGETFUL.values(), ids=list(FORGETFUL))
def test_a_handler_that_forgets_to_stamp_is_caught(
    handler: str, _: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = getattr(Model, handler)

    def forgetful(self: Model, *args: object) -> None:
        roles, grants = dict(self.roles_moved), dict(self.grants_moved)
        original(self, *args)
        self.roles_moved.clear()
        self.roles_moved.update(roles)
        self.grants_moved.clear()
        self.grants_moved.update(grants)

    monkeypatch.setattr(Model, handler, forgetful)
    if handler.startswith("_on_"):
        from pushdown.model import state

        monkeypatch.setitem(
            state._HANDLERS, next(k for k, v in state._HANDLERS.items() if v is original), forgetful
        )
    with pytest.raises(AssertionError):
        for seed in range(8):
            play(seed)


def test_a_copy_and_its_original_never_share_a_stamp_for_different_changes() -> None:
    """A deep copy (a replica) and the members view (a shallow copy sharing the model's
    dicts) move on apart: a change to either gives a stamp neither held before."""
    model = Model()
    for events in (ch.add_user(model, "u1"), ch.create_role(model, "r1")):
        for event in events:
            model.apply(event)
    replica = copy.deepcopy(model)
    assert replica.roles_moved == model.roles_moved and replica.grants_moved == model.grants_moved
    held = set(model.roles_moved.values()) | set(model.grants_moved.values())
    for m in (model, replica):
        for event in ch.grant_role(m, "r1", Principal.user("u1")):
            m.apply(event)
    assert model.roles_moved["u1"] != replica.roles_moved["u1"]
    assert not {model.roles_moved["u1"], replica.roles_moved["u1"]} & held
    for event in ch.add_group(model, "g", ["u1"]):
        model.apply(event)
    stamp = model.roles_moved["u1"]
    view = with_members(model, {"g": {"u2"}})
    assert view.roles_moved.get("u2") not in (None, stamp)
    assert model.roles_moved["u1"] == stamp  # the view's members moved nobody of the model


@pytest.mark.parametrize(
    "handler", ["_on_user_added", "_on_user_removed", "_on_role_created", "_on_role_deleted"]
)
def test_a_roster_change_without_its_count_is_caught(handler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user or role added or removed without :attr:`Model.roster_stamped` moving would let
    a cache of who exists (the Ranger backend's kept identity, its refused principals)
    stand falsely: the histories above catch each handler."""
    original = getattr(Model, handler)

    def uncounted(self: Model, event: object) -> None:
        roster = self.roster_stamped
        original(self, event)
        self.roster_stamped = roster

    monkeypatch.setattr(Model, handler, uncounted)
    monkeypatch.setitem(
        state._HANDLERS, next(k for k, v in state._HANDLERS.items() if v is original), uncounted
    )
    with pytest.raises(AssertionError):
        for seed in range(8):
            play(seed)


@pytest.mark.parametrize("table", ["roles", "grants"])
def test_a_stamp_given_without_its_count_is_caught(table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stamp the counts miss (:attr:`Model.roles_stamped`, :attr:`Model.grants_stamped`)
    would let a cache read "nobody else was stamped" falsely: the histories above catch it."""

    def uncounted_roles(self: Model, users: object) -> None:
        for user in users:  # type: ignore[attr-defined]
            self.roles_moved[user] = next(state._STAMPS)

    def uncounted_grants(self: Model, role: str) -> None:
        self.grants_moved[role] = next(state._STAMPS)

    if table == "roles":
        monkeypatch.setattr(Model, "_moved_roles_of", uncounted_roles)
    else:
        monkeypatch.setattr(Model, "_moved_grants_of", uncounted_grants)
    with pytest.raises(AssertionError):
        play(0)


def test_the_log_names_the_users_stamped_since_a_count_and_none_past_its_trim(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a log of 8 entries kept (4 after a trim): the users stamped since a count it
    still reaches, ``None`` for one older than it (or one the model never reached); the
    random histories above check the same with the log of every size they draw."""
    monkeypatch.setattr(state, "STAMP_LOG_KEPT", 8)
    model = Model()
    for user in ("u1", "u2", "u3"):
        for event in ch.add_user(model, user):
            model.apply(event)
    start = model.roles_stamped
    for event in ch.add_group(model, "g", ["u1", "u2"]):
        model.apply(event)
    assert model.stamped_since(start) == {"u1", "u2"}
    assert model.stamped_since(start + 1) == {"u2"}
    assert model.stamped_since(model.roles_stamped + 1) is None
    latest = model.roles_stamped
    for event in ch.add_user(model, "u4"):
        model.apply(event)
    assert model.stamped_since(latest) == {"u4"}
    for k in range(12):  # past 8 entries: the oldest dropped
        for event in ch.add_user(model, f"x{k}"):
            model.apply(event)
    assert len(model.stamp_log) <= 8
    assert model.stamped_since(start) is None  # older than the log: the caller falls back
    assert model.stamped_since(model.stamp_log_base) is not None


def test_copies_keep_logs_of_their_own() -> None:
    """A deep copy and a pickled copy carry the log and move on apart from the model; the
    members view starts a log of its own (the model's counts reach nothing of it)."""
    import pickle

    model = Model()
    for event in ch.add_user(model, "u1"):
        model.apply(event)
    count = model.roles_stamped
    for replica in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert replica.stamp_log == model.stamp_log and replica.stamp_log_base == model.stamp_log_base
        for event in ch.add_user(replica, "u2"):
            replica.apply(event)
        assert replica.stamped_since(count) == {"u2"} and model.stamped_since(count) == frozenset()
    for event in ch.add_group(model, "g", ["u1"]):
        model.apply(event)
    logged = list(model.stamp_log)
    view = with_members(model, {"g": {"u3"}})
    assert view.stamp_log_base == model.roles_stamped
    assert view.stamped_since(model.roles_stamped) == {"u3"}
    assert view.stamped_since(count) is None
    assert model.stamp_log == logged and model.stamped_since(model.roles_stamped) == frozenset()


def test_the_histories_hold_with_a_log_trimmed_every_few_stamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The random histories with a log of 4 entries: counts it no longer reaches answer
    ``None``, the others exactly the users stamped since."""
    monkeypatch.setattr(state, "STAMP_LOG_KEPT", 4)
    for seed in range(4):
        play(seed)
