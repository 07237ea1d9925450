"""The order of an apply's writes: narrow-first across policies, never wider on the way
(see :func:`schedule` and docs/ranger.md, "The fence"). Pure."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field

from pushdown.reconcile.plan import Fact, Op
from pushdown_ranger.facts import Pair, PolicyFact, RoleFact

__all__ = [
    "BOTH",
    "CREATE_ROLES",
    "DROP_ROLES",
    "MEMBERS_IN",
    "MEMBERS_OUT",
    "NARROW",
    "WIDEN",
    "Write",
    "schedule",
    "stage_of",
]


@dataclass(frozen=True)
class Write:
    """One write of :func:`schedule`: ``step`` (an operation, or the narrowing half of one)
    for ``op``; ``widens``: it may grant more; ``last``: ``op`` is done once it is."""

    stage: int
    step: Op
    op: Op
    widens: bool
    last: bool
    sub: int = 0
    #: a write the plan has no operation for (``op`` is made for it): the transient deny of
    #: a join cycle (:func:`_transient`), or the per-user role it names
    extra: bool = False
    #: a write :func:`_transient` made (the plan's operation for it, or one made for it)
    transient: bool = False


#: the stages of :func:`schedule`
CREATE_ROLES, NARROW, MEMBERS_OUT, BOTH, MEMBERS_IN, WIDEN, DROP_ROLES = range(7)


def schedule(
    ops: tuple[Op, ...] | list[Op],
    held: Iterable[Fact] = (),
    named: tuple[Container[str], Container[str]] | None = None,
    implied: Iterable[tuple[str, str, frozenset[str]]] = (),
    user_role_prefix: str | None = None,
    nested_elsewhere: Iterable[str] = (),
    *,
    nested: Container[str] | None = None,
    reserved: Iterable[str] = (),
) -> list[Write]:
    """The writes of an apply, narrow-first across policies:

    0. roles created (nothing names a new role yet);
    1. every policy write that only narrows (allow items removed, deny items added, a
       deny-only policy created), and the narrowing half of a change that does both:
       the policy with the allow items it keeps and the deny items of before and after;
    2. members join the roles no allow item names and no role holds as a member (that
       only narrows; a change that also takes members out is written first to the members
       of before and after, then whole); then members leave roles, those of roles no deny
       item names first (a role change that also adds members: to the members it keeps);
       leaving a role a deny item names lifts that deny, so it counts as widening: once a
       write is refused it waits for the next sync;
    3. the one policy change that both narrows and widens, whole, when it is the only one
       (every other policy then holds its narrowed form, which its new form only widens);
    4. members join roles, each role whose deny items could take away what another
       joining role's allow items give first (:func:`_join_order`): every policy holds its
       narrowed form, its new one, or (a change that only widens) its old one, each no
       wider than the new, so a member joining is given no more than the new model gives
       it; and a deny item that goes in step 5 because the new model denies the member
       through the role it joins still holds while it joins. Where those constraints make
       a cycle, a user joining two of its roles is first denied, through its per-user role
       (or a role made for it alone: :func:`_made`), what the deny items of the role
       joined out of order deny (:func:`_transient`: those
       deny items go in stage 1, the per-user role, when new, in stage 0; they go again
       in stage 5 and the role in stage 6, both widening);
    5. every policy write that widens (deny items removed, allow items added), and the
       rest of each change that does both when there are two or more (then each is split);
    6. roles removed (Ranger refuses to delete a role a policy still names; its members
       are then taken out: of a role a deny item names, that widens, so it waits once a
       write is refused).

    After any prefix of stage 1 each policy holds what it held or its narrowed form
    (allow items of before and after, deny items of either), so nothing is allowed that
    was not; from stage 3 on, its narrowed form or its new one, so nothing is allowed
    that the new model does not allow (the members of a role aside: see docs/ranger.md).
    A policy is written twice only when two or more changes both narrow and widen, or
    when a join cycle's transient deny items go into it.
    ``held``: the facts Ranger holds (which roles its policies name in allow and deny items);
    ``named``: those roles, when the caller has them (then ``held`` is not looked at, but
    for the order of joins: :func:`_join_order`); ``implied``: (service, access type, the
    access types it implies), from the service definitions; ``user_role_prefix``: the
    prefix of the per-user roles, through which a join cycle's users are denied while they
    join (without it, a cycle's joins go by name: a member may be wider on the way);
    ``nested_elsewhere``: the roles that roles not among ``held`` (hand-made) hold as members;
    ``nested``: the roles that roles among ``held`` hold as members, when the caller has
    them (the read's index: then ``held`` is not walked for them); ``reserved``: role names
    a role made for a join cycle's user (:func:`_made`) must not take besides those held or
    planned (the hand-made roles', the per-user role name of every user the model or Ranger
    knows), looked at only when such a role is made."""
    allowing: Container[str] = frozenset()
    denying: Container[str] = frozenset()
    if any(isinstance(op.fact, RoleFact) for op in ops):  # only role writes look at them
        policies = [f for op in ops for f in (op.before, op.after) if isinstance(f, PolicyFact)]
        if named is None:
            policies += [f for f in held if isinstance(f, PolicyFact)]
        allowing = _Either(
            {role for f in policies for role, _ in f.allow}, None if named is None else named[0]
        )
        denying = _Either({role for f in policies for role, _ in f.deny}, None if named is None else named[1])
    members: set[str] | None = None

    def deny_only(name: str) -> bool:
        """Whether no allow item names the role ``name`` and no role holds it as a member
        (nested by hand: its members would get that role's allows too)."""
        nonlocal members
        if name in allowing:
            return False
        if members is None:  # looked at only when a join may go early
            facts = [f for op in ops for f in (op.before, op.after)]
            if nested is None:  # no index: every role held is looked at
                facts += [f for f in held if isinstance(f, RoleFact)]
            members = {m for f in facts if isinstance(f, RoleFact) for m in f.roles}
            members.update(nested_elsewhere)
        return name not in members and (nested is None or name not in nested)

    mixed = sum(1 for op in ops if isinstance(op.fact, PolicyFact) and stage_of(op)[1] is not None)
    joining = sorted(
        {
            op.fact.name
            for op in ops
            if isinstance(op.fact, RoleFact)
            and _added(op)
            and op.fact.name in allowing
            and op.action == "change"
        }
    )
    rank: dict[str, int] = {}
    cycle: Cycle | None = None
    if len(joining) > 1:
        rank, cycle = _join_order(joining, denying, ops, held, implied, user_role_prefix, deny_only, reserved)
    if cycle is not None and cycle.roles:
        # the per-user roles the transient deny items name: leaving one lifts them
        denying = _Either(frozenset(cycle.roles), denying)
    out: list[Write] = []
    # a policy change that narrows and widens is written whole (one write) only when no
    # other write can lie between its halves: another such change, or a member joining a
    # role (what it takes out, a deny item of one role, may be given back by another role's
    # deny item the joining member gets only then), split it in two, narrowing first
    adding = any(isinstance(op.fact, RoleFact) and _added(op) for op in ops)
    for op in ops:
        first, half = stage_of(op, split=mixed > 1 or (mixed > 0 and adding))
        if first == MEMBERS_IN and isinstance(op.fact, RoleFact) and deny_only(op.fact.name):
            first = MEMBERS_OUT  # joining a role only deny items name: narrower
        if half is not None and isinstance(op.fact, RoleFact) and deny_only(op.fact.name):
            # members joining and leaving a role only deny items name (a per-user role
            # edited by hand, say): the joins first (narrower), with the other narrowing
            # writes, before any member joins a role allow items name; the leaving after
            out.append(Write(MEMBERS_OUT, _joined(op), op, False, False, 0))
            out.append(Write(MEMBERS_OUT, op, op, _lifts_deny(op, denying), True, 2))
            continue
        sub = _within(op, first, half is not None, denying, rank)
        if half is None:
            widens = BOTH <= first < DROP_ROLES or _lifts_deny(op, denying)
            out.append(Write(first, op, op, widens, True, sub))
        else:
            out.append(Write(first, half, op, _lifts_deny(half, denying), False, sub))
            later = WIDEN if isinstance(op.fact, PolicyFact) else MEMBERS_IN
            out.append(Write(later, op, op, True, True, _within(op, later, False, denying, rank)))
    if cycle is not None and cycle.policies:
        out = _transient(out, ops, cycle)
    out.sort(key=lambda w: (w.stage, w.sub, str(w.op.fact), w.last))
    return out


class _Either:
    """Names in ``one`` or in ``other``."""

    def __init__(self, one: Container[str], other: Container[str] | None) -> None:
        self.one, self.other = one, other

    def __contains__(self, name: object) -> bool:
        return name in self.one or (self.other is not None and name in self.other)


def _lifts_deny(op: Op, denying: Container[str]) -> bool:
    """Whether ``op`` takes members out of a role a deny item names (or removes it: when
    Ranger refuses to delete a role a policy still names, its members are taken out): they
    lose that deny, so the write widens (held back once a write is refused, like any
    widening: the narrowing it relied on may not have happened)."""
    before, after = op.before, op.after
    if not isinstance(before, RoleFact) or before.name not in denying:
        return False
    if not isinstance(after, RoleFact):  # removed: Ranger keeps a role a policy names, members gone
        return bool(before.users or before.groups or before.roles)
    return bool(before.users - after.users or before.groups - after.groups or before.roles - after.roles)


def _within(
    op: Op, stage: int, split: bool, denying: Container[str], rank: dict[str, int] | None = None
) -> int:
    """The order of role writes within their stage: in stage 2, members joining first,
    then leaving roles no deny item names; in stage 4, :func:`_join_order`'s order."""
    if not isinstance(op.fact, RoleFact):
        return 0
    named = op.fact.name in denying
    if stage == MEMBERS_OUT:
        return 0 if _added(op) and not split else (2 if named else 1)
    if stage == MEMBERS_IN:
        if rank and op.fact.name in rank:
            return rank[op.fact.name]
        return 0 if named else 1
    return 0


@dataclass
class Cycle:
    """What breaking the join cycles of an apply takes (:func:`_join_order`): per policy
    key, the policy as the new model holds it (the plan's operation's after, else as held)
    and the deny items naming per-user roles (or roles made for one user: :func:`_made`)
    it holds while members join; per such role, its one member, and whether the apply
    creates it (and removes it after)."""

    policies: dict[object, tuple[PolicyFact, set[Pair]]] = field(default_factory=dict)
    roles: dict[str, tuple[str, bool]] = field(default_factory=dict)


def _join_order(
    joining: list[str],
    denying: Container[str],
    ops: tuple[Op, ...] | list[Op],
    held: Iterable[Fact],
    implied: Iterable[tuple[str, str, frozenset[str]]],
    user_role_prefix: str | None = None,
    early: Callable[[str], bool] = lambda name: False,
    reserved: Iterable[str] = (),
) -> tuple[dict[str, int], Cycle | None]:
    """The rank of each role members join in stage 4: a role whose deny items could take
    away an access another joining role's allow items give (the same service and access
    type, or one either implies, on any resources) is joined before it, so a member never holds the allow
    without the deny. The items counted are those of every policy, held, before and
    after (more items: more constraints, never fewer). Ties go by roles a deny item names
    first, then by name.

    When the constraints make a cycle (each role allows what another denies: no order of
    joins is safe), one role ``d`` of it (the first by the same rule) has its constraints
    met another way: each user joining ``d`` and a role ``d`` had to come before is denied
    through its per-user role (``user_role_prefix`` + the user) what ``d``'s deny items in
    the new model deny there, before any join (:class:`Cycle`, :func:`_transient`). A
    per-user role the apply cannot rely on (one held without the user, or one the plan
    removes, or changes to lack the user, or to take the user in among the joins: a role
    allow items name) is not used: the user is denied through a role made for it alone
    (:func:`_made`, never a name held, planned, ``reserved`` or the per-user role name of a
    user any role held or planned holds), created in stage 0 and removed in stage 6. Without
    ``user_role_prefix``, every join goes by the rule without constraints: a member may be
    wider on the way until its last join."""
    wanted = set(joining)
    more: dict[tuple[str, str], frozenset[str]] = {(s, a): m for s, a, m in implied}

    def closure(service: str, access: str) -> set[tuple[str, str]]:
        out, todo = {access}, [access]
        while todo:
            for x in more.get((service, todo.pop()), ()):
                if x not in out:
                    out.add(x)
                    todo.append(x)
        return {(service, x) for x in out}

    # the users each joining role gains, and the per-user roles they have
    added: dict[str, set[str]] = {r: set() for r in joining}
    user_roles: dict[str, Op] = {}
    for op in ops:
        fact = op.fact
        if isinstance(fact, RoleFact):
            if fact.name in wanted and isinstance(op.before, RoleFact) and isinstance(op.after, RoleFact):
                added[fact.name] |= op.after.users - op.before.users
            elif user_role_prefix is not None and fact.name.startswith(user_role_prefix):
                user_roles[fact.name] = op
    candidates = (
        {user_role_prefix + u for users in added.values() for u in users}
        if user_role_prefix is not None
        else set()
    )
    allows: dict[str, set[tuple[str, str]]] = {r: set() for r in joining}
    denies: dict[str, set[tuple[str, str]]] = {r: set() for r in joining}
    # the policies whose deny items name a joining role: the new model's (the plan's
    # after), else as held (a policy the plan leaves)
    denied_by: dict[object, PolicyFact] = {}
    planned: set[object] = set()
    held_roles: dict[str, RoleFact] = {}
    # every role name held or planned, and the per-user role name of every user a role held
    # or planned holds, casefolded (Ranger's are not)
    taken: set[str] = set()
    for op in ops:
        if isinstance(op.fact, PolicyFact):
            planned.add(op.fact.key)
            if isinstance(op.after, PolicyFact) and any(role in wanted for role, _ in op.after.deny):
                denied_by[op.after.key] = op.after
    facts = [f for op in ops for f in (op.before, op.after)]
    for one in (*facts, *held):
        if isinstance(one, RoleFact):
            taken.add(one.name.casefold())
            if user_role_prefix is not None:
                taken.update((user_role_prefix + u).casefold() for u in one.users)
            if one.name in candidates:
                held_roles.setdefault(one.name, one)
            continue
        if not isinstance(one, PolicyFact):
            continue
        fact = one
        for role, access in fact.allow:
            if role in wanted:
                allows[role] |= closure(fact.service, access)
        for role, access in fact.deny:
            if role in wanted:
                denies[role] |= closure(fact.service, access)
                if fact.key not in planned:
                    denied_by.setdefault(fact.key, fact)
    # before[r]: the roles to join before r (their denies meet r's allows)
    before = {r: {d for d in joining if d != r and denies[d] & allows[r]} for r in joining}
    constraints = {r: set(ds) for r, ds in before.items()}

    def tie(name: str) -> tuple[int, str]:
        return (0 if name in denying else 1, name)

    rank: dict[str, int] = {}
    met: list[str] = []  # roles whose constraints the transient deny items meet
    left = set(joining)
    while left:
        ready = [r for r in left if not (before[r] & left)]
        if not ready:  # a cycle: no order is safe
            if user_role_prefix is None:
                return {}, None  # the old rule's, as before
            d = _on_cycle(left, before, tie)
            met.append(d)
            for r in left:
                before[r].discard(d)
            continue
        pick = min(ready, key=tie)
        rank[pick] = len(rank)
        left.discard(pick)
    if not met:
        return rank, None
    assert user_role_prefix is not None
    cycle = Cycle()
    relied: dict[str, tuple[str, bool]] = {}  # per user: the role denying it, made new
    # the per-user role names of the users joining (one may be relied on, made new, for a
    # user without one: no role made for another user may take it)
    taken.update((user_role_prefix + u).casefold() for users in added.values() for u in users)
    more_taken = iter(reserved)  # looked at once a role is made

    def usable(user: str) -> tuple[str, bool]:
        if user not in relied:
            name = user_role_prefix + user
            op, fact = user_roles.get(name), held_roles.get(name)
            if op is None:
                ok = fact is None or user in fact.users
            elif op.action == "add":
                ok = isinstance(op.after, RoleFact) and user in op.after.users
            elif op.action == "remove":
                ok = isinstance(op.before, RoleFact) and user in op.before.users
            else:  # a per-user role changed (made by hand): relied on when it holds the user
                # before its write and after, or takes it in among the narrowing writes (no
                # allow item names it: :func:`schedule`); its other members moving is narrower
                ok = (
                    isinstance(op.before, RoleFact)
                    and isinstance(op.after, RoleFact)
                    and user in op.after.users
                    and (user in op.before.users or early(name))
                )
            if ok:
                relied[user] = (name, op is None and fact is None)
            else:  # a role made for it alone
                taken.update(r.casefold() for r in more_taken)
                relied[user] = (_made(name, taken), True)
            taken.add(relied[user][0].casefold())  # every name relied on or made, before the next
        return relied[user]

    for d in met:
        after = [r for r in joining if d in constraints[r]]
        for key, fact in sorted(denied_by.items(), key=lambda kv: str(kv[0])):
            for role, access in fact.deny:
                if role != d:
                    continue
                reach = closure(fact.service, access)
                users = {u for r in after if reach & allows[r] for u in added[d] & added[r]}
                if users:
                    pairs = cycle.policies.setdefault(key, (fact, set()))[1]
                    pairs.update((usable(u)[0], access) for u in users)
                    cycle.roles.update((usable(u)[0], (u, usable(u)[1])) for u in sorted(users))
    return rank, cycle


def _made(name: str, taken: set[str]) -> str:
    """A name for a role made to deny one user alone while it joins, the per-user role
    ``name`` being one the apply cannot rely on: ``name`` + ``~`` + the first number giving
    a name not in ``taken`` (casefolded: the roles held or planned, hand-made ones too, the
    names relied on or made before, and the per-user role name of every user known, a user
    named ``u~1`` say). Ranger refuses to create a role it holds under that
    name: the write is refused and the joins wait (narrower)."""
    n = 1
    while f"{name}~{n}".casefold() in taken:
        n += 1
    return f"{name}~{n}"


def _on_cycle(left: set[str], before: dict[str, set[str]], tie: Callable[[str], tuple[int, str]]) -> str:
    """The first role by ``tie`` on a cycle of ``before`` among ``left`` (each of which has
    a role of ``left`` to come before it)."""
    path: list[str] = []
    at = min(left, key=tie)
    while at not in path:
        path.append(at)
        at = min(before[at] & left, key=tie)
    return min(path[path.index(at) :], key=tie)


def _transient(out: list[Write], ops: tuple[Op, ...] | list[Op], cycle: Cycle) -> list[Write]:
    """``out`` with the writes of a join cycle's transient deny items: each policy whose deny
    items are met so is written in stage 1 in its narrowed form (allow items of before and
    after, deny items of either) with the per-user roles' deny items, and in stage 5 in its
    new form (widening: it waits once a write is refused, the deny items then stay,
    narrower, until the next sync removes them); a per-user role the apply has not is
    created in stage 0 and removed in stage 6 (widening, likewise)."""
    planned = {
        op.fact.key: op for op in ops if isinstance(op.fact, PolicyFact) and op.fact.key in cycle.policies
    }
    replaced = set(planned.values())
    kept = [w for w in out if w.op not in replaced]
    for key, (fact, pairs) in cycle.policies.items():
        extra = frozenset(pairs)
        op = planned.get(key)
        if op is None:
            mid = PolicyFact(fact.service, fact.resources, fact.allow, fact.deny | extra)
            made = Op("change", fact, mid, fact.phase)
            kept.append(Write(NARROW, made, made, False, False, extra=True, transient=True))
            kept.append(
                Write(
                    WIDEN, Op("change", mid, fact, fact.phase), made, True, False, extra=True, transient=True
                )
            )
            continue
        old = op.before if isinstance(op.before, PolicyFact) else None
        assert isinstance(op.after, PolicyFact)
        new = op.after
        allow = new.allow & old.allow if old is not None else frozenset()
        deny = new.deny | (old.deny if old is not None else frozenset())
        mid = PolicyFact(new.service, new.resources, allow, deny | extra)
        step = Op("change" if old else "add", old, mid, op.phase)
        kept.append(Write(NARROW, step, op, False, False, transient=True))
        kept.append(Write(WIDEN, op, op, True, True, transient=True))
    for name, (user, new_role) in sorted(cycle.roles.items()):
        if new_role:
            role = RoleFact(name, frozenset({user}))
            made = Op("add", None, role, role.phase)
            kept.append(Write(CREATE_ROLES, made, made, False, False, extra=True, transient=True))
            gone = Op("remove", role, None, role.phase)
            kept.append(Write(DROP_ROLES, gone, gone, True, False, extra=True, transient=True))
    return kept


def stage_of(op: Op, *, split: bool = True) -> tuple[int, Op | None]:
    """Where ``op``'s first write goes, and the narrowing half written there when ``op``
    is written twice (``split``: a policy change that both narrows and widens is)."""
    before, after = op.before, op.after
    if isinstance(op.fact, RoleFact):
        if op.action == "remove":
            return DROP_ROLES, None
        if op.action == "add" or not (isinstance(before, RoleFact) and isinstance(after, RoleFact)):
            return CREATE_ROLES, None
        if not _added(op):
            return MEMBERS_OUT, None
        if before.users - after.users or before.groups - after.groups or before.roles - after.roles:
            kept = RoleFact(
                after.name,
                before.users & after.users,
                before.groups & after.groups,
                before.roles & after.roles,
            )
            return MEMBERS_OUT, Op("change", before, kept, op.phase)
        return MEMBERS_IN, None
    old = before if isinstance(before, PolicyFact) else None
    new = after if isinstance(after, PolicyFact) else None
    allow0, deny0 = (old.allow, old.deny) if old else (frozenset(), frozenset())
    allow1, deny1 = (new.allow, new.deny) if new else (frozenset(), frozenset())
    narrows = bool(allow0 - allow1 or deny1 - deny0)
    widens = bool(allow1 - allow0 or deny0 - deny1)
    if not widens:
        return NARROW, None
    if not narrows:
        return WIDEN, None
    if not split:
        return BOTH, None
    fact = op.fact
    assert isinstance(fact, PolicyFact)
    mid = PolicyFact(fact.service, fact.resources, allow0 & allow1, deny0 | deny1)
    return NARROW, Op("change" if old else "add", old, mid, op.phase)


def _joined(op: Op) -> Op:
    """A role change with the members it adds and none it takes out (the members of
    before and after)."""
    before, after = op.before, op.after
    assert isinstance(before, RoleFact) and isinstance(after, RoleFact)
    both = RoleFact(
        after.name, before.users | after.users, before.groups | after.groups, before.roles | after.roles
    )
    return Op("change", before, both, op.phase)


def _added(op: Op) -> bool:
    """Whether a role change adds members (it widens whatever names the role)."""
    before, after = op.before, op.after
    if not (isinstance(before, RoleFact) and isinstance(after, RoleFact)):
        return False
    return bool(after.users - before.users or after.groups - before.groups or after.roles - before.roles)
