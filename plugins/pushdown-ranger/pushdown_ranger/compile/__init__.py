"""The backend's compile: :func:`~pushdown_ranger.compile.desired.compile_desired`, then what hand-made
state and name mapping require of it (see :mod:`pushdown_ranger.handmade` and
:mod:`pushdown_ranger.compile.collide`). Pure.

- Hive databases whose hand-made policies void deny items (``voided``) take their Hive
  policies from a second compile without deny items; so does a topic or fileset service
  where such a policy is on one of pushdown's resource sets (``voiding``); the rest comes
  from the first.
- A topic or fileset service where a hand-made policy with override priority may match one
  of pushdown's resources (``overriding``: ``topic=*``, an enclosing recursive path), as the
  Hive service where one may match a database: its allow items beat deny items, so the
  service is compiled without deny items (issue 23, N1), and the policy is reported.
- Two or more catalogs with tables share the one Hive service: each Hive policy holds only
  what every catalog decides (:mod:`pushdown_ranger.compile.shared`; issue 23, N8), and each
  catalog's deny items reach the databases only the others register.
- Model users mapping to one Ranger user are compiled apart, then folded into that user.
- ``identity``: every model user's Ranger name, kept by the backend between syncs
  (:class:`~pushdown.reconcile.identity.KeptIdentity`): the compile maps no user again.
- ``kept``: each class's Hive items per database, kept by the backend between syncs
  (:mod:`pushdown_ranger.compile.classes`): a class is compiled again only where its
  grants or the database's tables moved.
- Policies of a service Ranger does not have are not pushed (a note).
- ``members_moved``: the users whose memberships the changes since the last compile name
  (``None``: a full compile): only the Ranger roles of the roles they hold or held are made
  again, the rest kept while the model's memberships are as they were made from
  (:func:`~pushdown_ranger.compile.desired.compile_desired`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Set
from dataclasses import replace
from typing import Any

from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.identity import Identity
from pushdown.reconcile.plan import Fact
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.compile.collide import apart, collisions, fold
from pushdown_ranger.compile.desired import RangerNaming, compile_desired, kept_roles
from pushdown_ranger.compile.principals import Principals, principals
from pushdown_ranger.compile.shared import mirrored, same_databases, shared_hive, table_catalogs
from pushdown_ranger.facts import Pair, PolicyFact, RoleFact
from pushdown_ranger.factsets import differ, parts
from pushdown_ranger.handmade import is_voided
from pushdown_ranger.overrides import overridden


def compile_all(
    model: Model,
    catalogs: Iterable[str],
    naming: RangerNaming,
    deny: Mapping[str, bool],
    *,
    focus: frozenset[ObjectRef] | None,
    elsewhere: frozenset[str],
    hive: str | None,
    voided: Mapping[str, str],
    services: frozenset[str],
    implied: tuple[tuple[str, str, frozenset[str]], ...] = (),
    voiding: frozenset[tuple[str, Any]] = frozenset(),
    overriding: frozenset[tuple[str, Any]] = frozenset(),
    locations: Mapping[str, tuple[str, ...]] | None = None,
    identity: Identity | None = None,
    kept: KeptClasses | None = None,
    members_moved: frozenset[str] | None = None,
) -> Desired:
    catalogs = list(catalogs)
    if identity is not None:
        naming = kept_naming(naming, identity)
    colliding = collisions(model, naming) if identity is None else identity.clashes()
    local = apart(naming, colliding) if colliding else naming
    who = _principals(model, local, identity)

    sharing = table_catalogs(model, catalogs)
    mirrors = mirrored(model, sharing) if len(sharing) > 1 else {}
    if len(sharing) > 1 and focus is not None:
        focus = same_databases(model, sharing, focus)
        names = {s.names[1].casefold() for s in focus}
        focus |= {
            ObjectRef(SecurableType.SCHEMA, (c, d))
            for c, ds in mirrors.items()
            for d in ds
            if d.casefold() in names
        }

    def run(deny_now: Mapping[str, bool]) -> Desired:
        def of(catalog: str | None, mirrored: frozenset[str] = frozenset()) -> Desired:
            """The compile with ``catalog`` as the Hive catalog (its databases ``mirrored``
            in the others sharing the Hive service)."""
            return compile_desired(
                model,
                catalogs,
                local,
                deny_now,
                focus=focus,
                named_elsewhere=elsewhere,
                hive=catalog,
                locations=locations,
                mirrored=mirrored,
                who=who,
                kept=kept,
                members_moved=members_moved,
            )

        if len(sharing) < 2:
            return of(hive)
        parts = {c: of(c, mirrors[c]) for c in sharing}
        return shared_hive(parts, model, local.hive_service, local.user_role_prefix, mirrors)

    desired = run(deny)
    # the Hive *service* (``hive`` is the catalog, which ``run`` passes on every call)
    service = naming.hive_service
    # each a pass over every compiled fact (one per model role): only when a hand-made
    # policy voids deny items or overrides (else none is voided, overridden or voiding)
    held = _databases(desired, service) if voided and deny.get(service, False) else set()
    databases = {d for d in held if is_voided(d, voided)}
    leaves = (
        {
            f.service
            for f in desired.facts
            if isinstance(f, PolicyFact) and f.service != service and deny.get(f.service, False)
            if (f.service, f.resources) in voiding or overridden(f.service, f.resources, overriding)
        }
        if voiding or overriding
        else set()
    )
    if databases or leaves:
        off = run({**deny, **dict.fromkeys(leaves, False), **({service: False} if databases else {})})
        desired = _splice(desired, off, databases, leaves, naming, elsewhere)
    desired = fold(desired, model, local, colliding, elsewhere) if colliding else desired
    return _unserviced(_implying(desired, implied), services)


#: the last :func:`principals` answer over a kept identity: (identity, key, answer, the
#: model asked and its roster stamps then; the model kept alive with its answer)
_WHO: list[tuple[Identity, tuple[object, ...], Principals, Model, int]] = []


def _principals(model: Model, naming: RangerNaming, identity: Identity | None) -> Principals:
    """:func:`principals`, whole model, again only when the kept identity (every user's
    Ranger name), the users, the roles or the naming moved: a sync that changes none of
    them (a grant, a role's member) takes the last answer. The users and roles are proved
    as they were by the model's roster stamps (the same model object, no user or role
    added or removed since: :attr:`Model.roster_stamped`), else compared."""
    if identity is None:
        return principals(model, naming)
    prefixes = (naming.role_prefix, naming.user_role_prefix)
    last = _WHO[0] if _WHO else None
    if last is not None and last[0] is identity and last[1][:2] == prefixes:
        if last[3] is model and last[4] == model.roster_stamped:
            return last[2]
    key = (*prefixes, frozenset(model.users), frozenset(model.roles))
    if last is not None and last[0] is identity and last[1] == key:
        _WHO[:] = [(identity, key, last[2], model, model.roster_stamped)]
        return last[2]
    who = principals(model, naming)
    _WHO[:] = [(identity, key, who, model, model.roster_stamped)]
    return who


def kept_naming(naming: RangerNaming, identity: Identity) -> RangerNaming:
    """``naming`` answering a user's Ranger name from ``identity`` (no mapping call), and
    asking the mapping only for a name it does not hold."""
    base = naming.map_principal

    def mapped(principal: Principal) -> str:
        if principal.kind is PrincipalKind.USER:
            name = identity.names.get(principal.name)
            if name is not None:
                return name
        return base(principal)

    return replace(naming, map_principal=mapped)


#: the members of the roles an allow set gives each access (worked out as asked)
Reached = dict[str, frozenset[str]]


def _covered(
    role: str,
    accesses: Iterable[str],
    allow: set[Pair],
    members: Mapping[str, frozenset[str]],
    reached: Reached,
) -> bool:
    """Whether every member of ``role`` is allowed each of ``accesses`` by some allow pair
    (``reached``: the members of the roles ``allow`` gives each access, worked out once a
    round of :func:`_implied_answer`, not once a pair)."""
    mine = members.get(role, frozenset())
    for access in accesses:
        if (role, access) in allow:
            continue
        if access not in reached:
            holders = (members.get(r, frozenset()) for r, a in allow if a == access)
            reached[access] = frozenset().union(*holders)
        if not mine <= reached[access]:
            return False
    return True


def _implying(desired: Desired, implied: tuple[tuple[str, str, frozenset[str]], ...]) -> Desired:
    """Ranger grants with an access type every type it implies (the service definition's
    ``impliedGrants``, which may change underneath): an allow pair stays only where every
    member of its role is allowed every implied type on that resource set too (else
    narrower, a note). Moved from the last compile's facts by the facts that differ
    (:class:`_Implying`): the answer of :func:`_implying_whole`."""
    more = {(service, access): rest for service, access, rest in implied}
    if not more:
        return desired
    with _IMPLYING_LOCK:  # one compile at a time moves the kept answer
        memo = _IMPLYING[0] if _IMPLYING and _IMPLYING[0].more == more else None
        if memo is None:
            memo = _Implying(more)
            _IMPLYING[:] = [memo]
        if not memo.moved(desired.facts):
            _IMPLYING.clear()  # two roles of one name: the whole answer, nothing kept
            return _implying_whole(desired, implied)
        if not memo.dropped:
            return desired
        notes = [_implied_note(d) for d in sorted(memo.dropped)]
        facts = frozenset(memo.out)
    return replace(desired, facts=facts, notes=(*desired.notes, *notes))


def _implied_note(dropped: str) -> str:
    return (
        f"{dropped}: the service definition makes it grant more (impliedGrants) than the model "
        "allows its holders; not pushed (narrower)"
    )


class _Implying:
    """:func:`_implying_whole` of the last facts, kept with what each answer depends on:
    each policy's answer (its allow pairs' roles' members), the members of each role, the
    policies naming each role in an allow pair. Moved to new facts by the facts that differ
    (two set differences in C): a policy added, or one naming a role whose members moved,
    is answered again; no other.

    A scoped sync compiles one database, so the next compile's facts hold another's policy,
    naming every role reading there: a policy left out is kept (``parked``) with its answer
    and its place in the index, so that it comes back at no cost, and is answered again
    when it comes back only if a role it names moved meanwhile (the index names it too). A
    policy that comes back changed takes the place of the one kept for its resource set:
    the index moves by the pairs that differ alone. The index counts, for each role, the
    allow pairs naming it per resource set (a compile's facts may hold two policies of one
    resource set: each is looked at when its role moved)."""

    def __init__(self, more: dict[tuple[str, str], frozenset[str]]) -> None:
        self.more = more
        self.facts: Set[Fact] = frozenset()
        self.members: dict[str, frozenset[str]] = {}
        self.named: dict[str, int] = {}
        #: policy (as compiled; in the facts or parked) -> (its fact as pushed, or None:
        #: emptied; its dropped pairs); none where a role it names moved since (answered
        #: again when it is in the facts)
        self.answers: dict[PolicyFact, tuple[PolicyFact | None, frozenset[str]]] = {}
        #: the policies of the facts whose answers are counted in ``out`` and ``dropped``
        self.live: set[PolicyFact] = set()
        #: the policies indexed but not in the facts, the longest parked first
        self.parked: dict[PolicyFact, None] = {}
        #: the most policies ever live (the parked are kept up to twice as many)
        self.most = 0
        #: each policy key -> the policies indexed (in the facts or parked) of that key
        self.by_key: dict[object, set[PolicyFact]] = {}
        #: role -> policy key -> how many allow pairs of the policies of that key name it
        self.naming: dict[str, dict[object, int]] = {}
        #: the facts as pushed, with how many compiled facts give each
        self.out: dict[Fact, int] = {}
        #: each dropped pair's description, with how many policies drop it
        self.dropped: dict[str, int] = {}

    def moved(self, facts: Set[Fact]) -> bool:
        """This answer, now of ``facts`` (``False``: two role facts of one name, where the
        whole answer depends on which is met last; nothing kept)."""
        if facts is self.facts:
            return True
        gone, added = differ(self.facts, facts)  # by the facts that differ where made so
        roles: set[str] = set()
        for fact in gone:
            if isinstance(fact, RoleFact):
                roles.add(fact.name)
                self.named[fact.name] -= 1
                if not self.named[fact.name]:
                    del self.named[fact.name], self.members[fact.name]
                _count(self.out, fact, -1)
            elif isinstance(fact, PolicyFact) and fact.allow:
                self._forget(fact)
                self.parked[fact] = None  # its place in the index kept, as its answer
            else:
                _count(self.out, fact, -1)
        arrived: list[PolicyFact] = []
        for fact in added:
            if isinstance(fact, RoleFact):
                roles.add(fact.name)
                self.named[fact.name] = self.named.get(fact.name, 0) + 1
                self.members[fact.name] = fact.users
            elif isinstance(fact, PolicyFact) and fact.allow:
                if fact in self.parked:  # indexed as it was left out
                    del self.parked[fact]
                    self._adopt(fact)
                else:
                    self._index(fact)
                arrived.append(fact)
                continue
            _count(self.out, fact, 1)
        self.facts = facts
        if any(self.named.get(r, 0) > 1 for r in roles):
            return False
        again = set(arrived)
        for fact in self._naming(roles):
            self._forget(fact)
            self.answers.pop(fact, None)  # a role it names moved: answered again
            if fact not in self.parked:
                again.add(fact)
        for fact in again:
            answer = self.answers.get(fact)
            if answer is None:
                answer = self.answers[fact] = _implied_answer(fact, self.more, self.members)
            self.live.add(fact)
            if answer[0] is not None:
                _count(self.out, answer[0], 1)
            for dropped in answer[1]:
                _count(self.dropped, dropped, 1)
        self.most = max(self.most, len(self.live))
        while len(self.parked) > max(_PARKED, 2 * self.most):
            self._unindex(next(iter(self.parked)))
        return True

    def _naming(self, roles: Iterable[str]) -> set[PolicyFact]:
        """The policies indexed (in the facts or parked) with an allow pair naming one of
        ``roles``."""
        found: set[PolicyFact] = set()
        for role in roles:
            for key in self.naming.get(role, ()):
                policies = self.by_key[key]
                if len(policies) == 1:
                    found |= policies
                else:  # two policies of one key: the one naming the role
                    found.update(f for f in policies if any(r == role for r, _ in f.allow))
        return found

    def _index(self, fact: PolicyFact) -> None:
        """Indexes ``fact``: in place of the policy parked for its key where there is one (by
        the pairs that differ), else by each of its pairs."""
        key = fact.key
        policies = self.by_key.setdefault(key, set())
        old = next((f for f in policies if f in self.parked), None)
        if old is None:
            self._step(key, fact.allow, 1)
        else:
            del self.parked[old]
            policies.discard(old)
            self.answers.pop(old, None)
            self._step(key, old.allow - fact.allow, -1)
            self._step(key, fact.allow - old.allow, 1)
        policies.add(fact)

    def _adopt(self, fact: PolicyFact) -> None:
        """``fact`` (back from being parked) made the object the index and its answer are
        kept under: a policy compiled again is a new object equal to the one parked, and
        each later look for it (a role it names moving, every membership) would compare the
        two pair by pair (issue 30: the every-table policy names every role reading its
        database, hundreds at the issue's estate) instead of finding it by identity."""
        policies = self.by_key[fact.key]
        if any(f is fact for f in policies):
            return
        policies.discard(fact)  # the equal one (one comparison, as it comes back)
        policies.add(fact)
        answer = self.answers.pop(fact, None)
        if answer is not None:
            self.answers[fact] = answer

    def _unindex(self, fact: PolicyFact) -> None:
        """Drops a parked policy (the oldest, when too many are)."""
        del self.parked[fact]
        self.answers.pop(fact, None)
        key = fact.key
        self.by_key[key].discard(fact)
        if not self.by_key[key]:
            del self.by_key[key]
        self._step(key, fact.allow, -1)

    def _step(self, key: object, pairs: Iterable[Pair], step: int) -> None:
        global indexed
        for role, _ in pairs:
            indexed += 1
            keys = self.naming.setdefault(role, {})
            n = keys.get(key, 0) + step
            if n:
                keys[key] = n
            else:
                del keys[key]
                if not keys:
                    del self.naming[role]

    def _forget(self, fact: PolicyFact) -> None:
        """Takes a live policy's answer out of ``out`` and ``dropped`` (the answer kept)."""
        if fact not in self.live:
            return
        self.live.discard(fact)
        answer = self.answers[fact]
        if answer[0] is not None:
            _count(self.out, answer[0], -1)
        for dropped in answer[1]:
            _count(self.dropped, dropped, -1)


def _count(counts: dict[Any, int], key: object, step: int) -> None:
    n = counts.get(key, 0) + step
    if n:
        counts[key] = n
    else:
        del counts[key]


#: the index steps :class:`_Implying` took (a pair counted in or out), all its calls
#: (what a test bounds)
indexed = 0
#: the fewest policies :class:`_Implying` keeps parked (left out of the facts) before it drops
#: the longest parked
_PARKED = 1024

#: the one :class:`_Implying` kept (for the last implied grants)
_IMPLYING: list[_Implying] = []
_IMPLYING_LOCK = threading.Lock()


def _implied_answer(
    fact: PolicyFact, more: Mapping[tuple[str, str], frozenset[str]], members: Mapping[str, frozenset[str]]
) -> tuple[PolicyFact | None, frozenset[str]]:
    """A policy with allow pairs as pushed (``None``: none left) and the pairs dropped."""
    allow = set(fact.allow)
    dropped: set[str] = set()
    # a pair whose access implies nothing is covered as it stands: only the others are
    # checked (a policy of a database names every role reading it; few imply more)
    implies = {a: more.get((fact.service, a), frozenset()) for a in {a for _, a in allow}}
    while True:
        reached: Reached = {}
        bad = {
            (r, a) for r, a in allow if implies[a] and not _covered(r, implies[a], allow, members, reached)
        }
        if not bad:
            break
        allow -= bad
        for role, access in bad:
            who = ", ".join(sorted(members.get(role, ()))) or role
            dropped.add(f"{fact.service}:{fact.describe_resources()} {access} (for {who})")
    out = fact if not dropped else replace(fact, allow=frozenset(allow))  # kept: no copy of it
    return (None if out.empty else out), frozenset(dropped)


def _implying_whole(desired: Desired, implied: tuple[tuple[str, str, frozenset[str]], ...]) -> Desired:
    """:func:`_implying` over every fact at once."""
    more = {(service, access): rest for service, access, rest in implied}
    if not more:
        return desired
    members = {f.name: f.users for f in desired.facts if isinstance(f, RoleFact)}
    facts: list[Fact] = []
    dropped: set[str] = set()
    for fact in desired.facts:
        if isinstance(fact, PolicyFact) and fact.allow:
            pushed, lost = _implied_answer(fact, more, members)
            dropped |= lost
            if pushed is None:
                continue
            fact = pushed
        facts.append(fact)
    if not dropped:
        return desired
    notes = [_implied_note(d) for d in sorted(dropped)]
    return replace(desired, facts=frozenset(facts), notes=(*desired.notes, *notes))


def _databases(desired: Desired, hive_service: str) -> set[str]:
    return {d for f in desired.facts if (d := _database(f, hive_service)) is not None}


def _database(fact: Fact, hive_service: str) -> str | None:
    if not isinstance(fact, PolicyFact) or fact.service != hive_service:
        return None
    return next((v[0] for k, v, _ in fact.resources if k == "database" and len(v) == 1), None)


def _splice(
    on: Desired,
    off: Desired,
    voided: set[str],
    services: set[str],
    naming: RangerNaming,
    elsewhere: frozenset[str],
) -> Desired:
    """``on``, with the Hive policies of ``voided`` databases and every policy of ``services``
    (topics', filesets') taken from ``off``."""
    hive = naming.hive_service

    def from_off(f: PolicyFact) -> bool:
        return f.service in services or (f.service == hive and _database(f, hive) in voided)

    policies: list[Fact] = [f for f in on.facts if isinstance(f, PolicyFact) and not from_off(f)]
    policies += [f for f in off.facts if isinstance(f, PolicyFact) and from_off(f)]
    named = elsewhere | {r for f in policies if isinstance(f, PolicyFact) for r, _ in f.allow | f.deny}
    roles = {f.name: f for d in (on, off) for f in d.facts if isinstance(f, RoleFact)}
    kept: list[Fact] = [
        f for name, f in roles.items() if not name.startswith(naming.user_role_prefix) or name in named
    ]
    return replace(on, facts=frozenset(policies + kept))


def _unserviced(desired: Desired, services: frozenset[str]) -> Desired:
    # the model roles' Ranger roles kept between compiles are no policy: left out in C,
    # not looked at one by one (one per model role)
    kept, joined = kept_roles(), parts(desired.facts)
    # of a set joined from the kept roles, its own facts alone (the rest is those roles)
    others = joined[1] - kept if joined is not None and joined[0] is kept else desired.facts - kept
    missing = sorted({f.service for f in others if isinstance(f, PolicyFact) and f.service not in services})
    if not missing:
        return desired
    facts = frozenset(f for f in desired.facts if not (isinstance(f, PolicyFact) and f.service in missing))
    notes = [
        f"Ranger has no service {s!r}: its policies are not pushed (narrower); create it" for s in missing
    ]
    return replace(desired, facts=facts, notes=(*desired.notes, *notes))
