"""The backend's compile: which Hive databases a sync compiles (its focus, and the
databases where Ranger no longer honours the deny items pushdown holds), and the compile
itself (:func:`~pushdown_ranger.compile.compile_all`), kept while nothing it depends on moved."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Set
from operator import itemgetter

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import (
    Desired,
    Snapshot,
)
from pushdown.reconcile.identity import Identity
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Resolved
from pushdown_ranger.compile import compile_all
from pushdown_ranger.compile.desired import hive_catalog, seen_memberships
from pushdown_ranger.compile.principals import _inexact, refused_roles
from pushdown_ranger.facts import PolicyFact, RoleFact
from pushdown_ranger.factsets import differ, frozen
from pushdown_ranger.handmade import (
    is_voided,
)
from pushdown_ranger.scoping import (
    Focus,
    covering,
    focus_of,
    made_hive,
    members_moved,
    principal_databases,
    role_databases,
    scope_users,
    shaped_database,
)
from pushdown_ranger.snapshot import (
    Implied,
    RangerBase,
    RangerSnapshot,
)


class ReadIndex:
    """What :meth:`Compiling._read_index` finds in a read's facts, with how many facts give
    each entry: moved from one read's facts to the next by the facts that differ (a sync's
    writes change a few policies and roles of thousands), never built again over all.
    Each ``by_*`` maps to the names found (with their counts; iterate it, or ``get``)."""

    def __init__(self, service: str, prefix: str = "") -> None:
        self.service, self.prefix = service, prefix
        self.facts: Set[Fact] = frozenset()
        #: role facts with a member role (nested by hand)
        self.nesting = 0
        #: the roles role facts hold as members (nested by hand)
        self.member_roles: dict[str, int] = {}
        self.by_member: dict[str, dict[str, int]] = {}
        self.by_role: dict[str, dict[str, int]] = {}
        self.by_database: dict[str, dict[str, int]] = {}
        #: ``by_database``, of the roles named ``prefix``... only (pushdown's per-user roles)
        self.prefixed_by_database: dict[str, dict[str, int]] = {}
        self.denying: dict[str, int] = {}
        #: the roles allow items and deny items name, in the policies of every service
        self.allowing_roles: dict[str, int] = {}
        self.denying_roles: dict[str, int] = {}
        #: the roles read (their names as Ranger holds them)
        self.roles: dict[str, int] = {}

    @property
    def nested(self) -> bool:
        return self.nesting > 0

    def moved(self, facts: Set[Fact]) -> ReadIndex:
        """This index, now of ``facts`` (the facts neither here nor there only: equal facts
        give equal entries)."""
        if facts is not self.facts:
            gone, added = differ(self.facts, facts)
            for fact in gone:
                self._count(fact, -1)
            for fact in added:
                self._count(fact, 1)
            self.facts = facts
        return self

    def _count(self, fact: Fact, step: int) -> None:
        if isinstance(fact, RoleFact):
            _bump_one(self.roles, fact.name, step)
            self.nesting += step if fact.roles else 0
            for member in fact.roles:
                _bump_one(self.member_roles, member, step)
            for member in fact.users:
                _bump(self.by_member, member.casefold(), fact.name, step)
        elif isinstance(fact, PolicyFact):
            for role in {role for role, _ in fact.allow}:
                _bump_one(self.allowing_roles, role, step)
            for role in {role for role, _ in fact.deny}:
                _bump_one(self.denying_roles, role, step)
            if fact.service == self.service:
                self._count_hive(fact, step)

    def _count_hive(self, fact: PolicyFact, step: int) -> None:
        if fact.deny:
            for held in {d for k, v, _ in fact.resources if k == "database" for d in v}:
                _bump_one(self.denying, held, step)
        database = shaped_database(fact)
        if database is not None:  # otherwise always covered
            for role in {role for role, _ in fact.allow | fact.deny}:
                _bump(self.by_database, database.casefold(), role, step)
                _bump(self.by_role, role, database, step)
                if role.startswith(self.prefix):
                    _bump(self.prefixed_by_database, database.casefold(), role, step)


#: a pair's role (a Ranger role named, of a policy item's ``(role, access)``)
_FIRST = itemgetter(0)


def fold_counts(identity: Identity) -> dict[str, int]:
    """How many model users the kept identity gives each Ranger name, folded (once per
    identity: it changes when a user is mapped again or dropped)."""
    folds: dict[str, int] = {}
    for name in identity.names.values():
        folds[name.casefold()] = folds.get(name.casefold(), 0) + 1
    return folds


def _bump(index: dict[str, dict[str, int]], key: str, name: str, step: int) -> None:
    counts = index.setdefault(key, {})
    _bump_one(counts, name, step)
    if not counts:
        del index[key]


def _bump_one(counts: dict[str, int], name: str, step: int) -> None:
    n = counts.get(name, 0) + step
    if n:
        counts[name] = n
    else:
        del counts[name]


class Compiling(RangerBase):
    #: the last scope of one user joining a role proved to change no policy
    #: (:meth:`Compiling._only_role_fact`): (its key, the model kept alive with it)
    _joined: tuple[object, Model] | None = None
    #: the last :meth:`_named_again` answer: ((the model's roles, the role prefix), the
    #: roles, (the model's id and version), the model kept alive with it)
    _again: tuple[tuple[frozenset[str], str], frozenset[str], tuple[int, int], Model, int] | None = None

    def hive(self, model: Model) -> str | None:
        """:func:`~pushdown_ranger.compile.desired.hive_catalog`, once per model version."""
        key = (id(model), model.version)
        if self._hive is None or self._hive[0] != key:
            # the model is kept alive with its answer, so no other model can reuse its id
            self._hive = (key, hive_catalog(model, self.enforces(model)), model)
        return self._hive[1]

    def focus(self, model: Model, scope: Resolved, snapshot: RangerSnapshot | None = None) -> Focus:
        """The scope's focus, with every database where Ranger no longer honours deny items
        pushdown holds there (the deny option turned off, a policy voiding them): a scoped
        sync removes them, never only the full one."""
        hive = self.hive(model)
        focus = focus_of(scope, hive)
        if focus is not None and hive is not None and made_hive(model, scope, hive):
            return None  # the Hive catalog's first table: all its databases are due
        if focus is None and snapshot is not None and hive is not None:
            focus = self.members_focus(model, scope, snapshot, hive)
        if focus is None or snapshot is None or hive is None:
            return focus
        service = self.naming.hive_service
        off = not snapshot.deny.get(service, False)
        index = self._read_index(snapshot)
        held = set(index.denying)
        stale = held if off else {d for d in held if is_voided(d, snapshot.voided)}
        stale |= self._implying(snapshot, service)
        # a model role Ranger cannot name now (a role created one but for case with it) loses
        # its Ranger role in this sync (roles are compiled every time): the databases whose
        # policies name it are compiled too, its holders named there by their per-user roles
        for role in refused_roles(model, self.naming):
            stale.update(index.by_role.get(self.naming.role(role), ()))
        # and in reverse: a role Ranger can name again (its twin deleted) gets its Ranger
        # role back in this sync, so the databases where its holders' per-user roles stood
        # for it, and those of its grants, are compiled too (pushdown's role named there again)
        for role in self._named_again(model, index):
            found = role_databases(model, role, hive, self.enforces(model))
            if found is None:
                return None
            stale |= found
            for user in model.holders_of(role):
                stale.update(index.by_role.get(self.naming.user_role(user), ()))
            # or where another role held by exactly its holders stood for it (the full
            # compile names the role whose name sorts first among those of equal holders)
            for other in self._equal_named(model, index, role):
                stale.update(index.by_role.get(self.naming.role(other), ()))
        return focus | {ObjectRef(SecurableType.SCHEMA, (hive, d)) for d in stale}

    def _equal_named(self, model: Model, index: ReadIndex, role: str) -> list[str]:
        """The other model roles, named in a Hive policy, held by exactly ``role``'s
        holders (none when it has none): one of them stood for ``role`` while Ranger could
        not name it."""
        holders = model.holders_of(role)
        if not holders:
            return []
        prefix, named = self.naming.role_prefix, index.by_role
        return [
            other
            for other in sorted(model.roles)
            if other != role and named.get(prefix + other) and model.holders_of(other) == holders
        ]

    def _named_again(self, model: Model, index: ReadIndex) -> frozenset[str]:
        """The model roles Ranger can name (none refused) that no Hive policy shaped as
        pushdown writes names, while a holder's per-user role stands for them: the holders
        were named by their per-user roles while the role was refused (a role one with it
        but for case, deleted since). Its Ranger role lacking in the read, a holder's
        per-user role named in a Hive policy is enough; its Ranger role read (Ranger refused
        its deletion: a hand-made item names it), one Hive item must name a holder by its
        per-user role and every holder (:meth:`_stood_for`): the compile would name the
        role there. Looked for again only when the model's roles or the role prefix moved,
        or while the last look found some (a sync that failed midway is picked up); kept
        for the model version, so the read-back after the writes (which see the role made
        again) looks where the sync did."""
        prefix, last = self.naming.role_prefix, self._again
        if last is not None and last[2] == (id(model), model.version) and last[0][1] == prefix:
            return last[1]
        # the model's roles compared as they stand (a view: no estate-sized set made when
        # they did not move; the model has no stamp moved by roles created or deleted only)
        # (or proved by the model's roster stamps: the same object, no role created or deleted)
        if (
            last is not None
            and not last[1]
            and last[0][1] == prefix
            and ((last[3] is model and last[4] == model.roster_stamped) or model.roles.keys() == last[0][0])
        ):
            self._again = (last[0], last[1], (id(model), model.version), model, model.roster_stamped)
            return last[1]
        key = (frozenset(model.roles), prefix)
        read, named = index.roles, index.by_role
        # a role Ranger lacks is named in no policy (Ranger refuses a policy naming it)
        unnamed = [role for role in key[0] - refused_roles(model, self.naming) if prefix + role not in named]
        found: set[str] = set()
        standing: list[tuple[str, dict[str, str]]] = []
        equal: dict[frozenset[str], list[str]] | None = None
        for role in unnamed:
            mine = {self.naming.user_role(u): u for u in model.holders_of(role)}
            if not any(named.get(r) for r in mine):
                # a role with grants stood for by another of exactly its holders (the
                # named roles' holders found once, only when such a role is looked at)
                if mine and model.roles.get(role):
                    if equal is None:
                        equal = {}
                        for other in model.roles:
                            if named.get(prefix + other):
                                equal.setdefault(frozenset(model.holders_of(other)), []).append(other)
                    if any(o != role for o in equal.get(frozenset(mine.values()), ())):
                        found.add(role)
                continue
            if prefix + role not in read:
                found.add(role)
            else:
                standing.append((role, mine))
        if standing:
            found |= self._stood_for(model, index, standing)
        # the model is kept alive with its answer, so no other model can reuse its id
        self._again = (key, frozenset(found), (id(model), model.version), model, model.roster_stamped)
        return self._again[1]

    def _stood_for(
        self, model: Model, index: ReadIndex, standing: list[tuple[str, dict[str, str]]]
    ) -> set[str]:
        """The roles of ``standing`` (each with its holders by per-user role) for which one
        item of a Hive policy (an access, allowed or denied) names a holder by its per-user
        role and every holder (by a per-user role, or as a holder of a model role it names):
        the compile covers those users with the role (or a larger one), never with that
        per-user role. Looked for by database in the read's index first; the policies read
        are passed over only when a database names every holder so (a sync moving the
        model's roles, and a role that is likely named again)."""
        likely = [
            (role, mine)
            for role, mine in standing
            if any(
                self._names_all(model, index.by_database.get(d.casefold(), {}), mine)
                for d in {d for r in mine for d in index.by_role.get(r, ())}
            )
        ]
        if not likely:
            return set()
        wanted = {r for _, mine in likely for r in mine}
        #: each wanted per-user role -> the items (roles named for one access) naming it
        naming_it: dict[str, list[set[str]]] = {}
        service = self.naming.hive_service
        for fact in index.facts:
            if fact.__class__ is not PolicyFact or fact.service != service:
                continue
            for pairs in (fact.allow, fact.deny):
                if wanted.isdisjoint(map(_FIRST, pairs)):
                    continue
                by_access: dict[str, set[str]] = {}
                for r, access in pairs:
                    by_access.setdefault(access, set()).add(r)
                for item in by_access.values():
                    for r in item & wanted:
                        naming_it.setdefault(r, []).append(item)
        return {
            role
            for role, mine in likely
            if any(self._names_all(model, item, mine) for r in mine for item in naming_it.get(r, ()))
        }

    def _names_all(self, model: Model, named: Collection[str], mine: dict[str, str]) -> bool:
        """Whether the Ranger roles ``named`` name every holder of ``mine`` (a role's
        holders by per-user role), one at least by its per-user role."""
        users = {mine[r] for r in named if r in mine}
        if not users:
            return False
        prefix = self.naming.role_prefix
        for r in named:
            if r.startswith(prefix) and r[len(prefix) :] in model.roles:
                users |= model.holders_of(r[len(prefix) :])
        return users >= set(mine.values())

    def _implying(self, snapshot: RangerSnapshot, service: str) -> set[str]:
        """:func:`_implying_more` of the snapshot's facts, moved from the last read's by the
        facts that differ (:class:`ImpliedDatabases`), while the service definitions'
        implied grants stand."""
        key = (snapshot.implied, service)
        kept = self._implied
        if kept is None or kept.key != key:
            kept = self._implied = ImpliedDatabases(key, snapshot.implied, service)
        facts = frozen(snapshot.facts)
        return kept.moved(facts)

    def members_focus(self, model: Model, scope: Resolved, snapshot: RangerSnapshot, hive: str) -> Focus:
        """A scope of principals only (a role granted or revoked, a group's member, a user
        added or removed) as the Hive databases it can change (``None``: every one): where a
        grant of the users' roles beyond the gates, a DENY of theirs or an object they own
        is, and where a policy names a Ranger role whose members they are or were (its
        per-user role, a model role's: a policy naming a role that gains a member is
        compiled again, it may no longer fit). Kept for the model version, and only ever
        widened within it: the read-back after the writes looks at least where the sync did."""
        if not scope.regions or any(r.roots is not None or r.users is None for r in scope.regions):
            return None
        users = frozenset().union(*(r.users or () for r in scope.regions))
        key = (id(model), model.version, users)
        joined, members = self._joined, self._members
        if joined is not None and joined[0] == key and members is not None and members[0] == key:
            # proved for this model version (:meth:`_only_role_fact`): asked again by the
            # compile and by the read-back after the writes, answered as the sync was
            return frozenset(ObjectRef(SecurableType.SCHEMA, (hive, d)) for d in members[1])
        found = principal_databases(model, users, hive, self.enforces(model))
        if found is None:
            return None
        identity = self.kept.of(model.users, users, roster=(model, model.roster_stamped))
        if self._folds is None or self._folds[0] is not identity:
            self._folds = (identity, fold_counts(identity))
        mine = {identity.names[u].casefold() for u in users if u in identity.names}
        # a user removed is mapped again (no longer in the model's names): the Ranger roles
        # it is still a member of are where its removal changes policies; one whose name a
        # model user still holds ended a clash, which changes that user's items everywhere
        names = identity.names
        gone = {r.casefold() for u in users if u not in names and (r := identity.name(u)) is not None}
        folds = self._folds[1]  # looked up by key (``set.isdisjoint`` walks a dict it is given)
        if any(folds.get(name, 0) > 1 for name in mine) or any(name in folds for name in gone):
            return None  # a twin's Ranger name (compiled apart, or refused): it changes too
        mine |= gone
        index = self._read_index(snapshot)
        if self._only_role_fact(model, users, identity, index):
            # the policies stand as Ranger holds them: none of the databases is compiled
            # (the role's Ranger role, compiled every time, takes the new member); kept
            # for the model version, so the read-back after the writes (which see the
            # user a member now) looks where the sync did
            # the model is kept alive with its answer, so no other model can reuse its id
            self._joined = (key, model)
            found = set()
            if self._members is not None and self._members[0] == key:
                found |= self._members[1]
            self._members = (key, frozenset(found), model)
            return frozenset(ObjectRef(SecurableType.SCHEMA, (hive, d)) for d in found)
        named = {self.naming.user_role(u) for u in users}
        named |= {self.naming.role(r) for u in users for r in model.roles_of(u)}
        if index.nested:
            return None  # a role nested by hand: its members reach further
        for name in mine:
            named.update(index.by_member.get(name, ()))
        for role in named:
            found.update(index.by_role.get(role, ()))
        left = self._left_databases(model, users, identity, index, self._folds[1])
        if left is None:
            return None
        found |= left
        if self._members is not None and self._members[0] == key:
            found |= self._members[1]
        # the model is kept alive with its answer, so no other model can reuse its id
        self._members = (key, frozenset(found), model)
        return frozenset(ObjectRef(SecurableType.SCHEMA, (hive, d)) for d in found)

    def _left_databases(
        self, model: Model, users: frozenset[str], identity: Identity, index: ReadIndex, folds: dict[str, int]
    ) -> set[str] | None:
        """Where a model role one of ``users`` left (its Ranger role in the read holds the
        user, the model's role no longer) may now fit an item it fitted not: smaller, it fits
        any item whose users hold all of its other holders, and is chosen there (largest
        first) over the per-user roles or smaller roles naming them, in databases where
        nothing names it yet. Such an item names each of those holders, so it lies where
        each of a few of them (named as itself in Ranger: a holder the compile counts) is
        a member of a Ranger role some Hive policy names: the intersection of their
        databases (``None``: every one, a holder's twin left the others unsure). ``folds``:
        how many model users hold each Ranger name (folded)."""
        prefix, names = self.naming.role_prefix, identity.names
        left: set[str] = set()
        for user in users:
            name = identity.name(user)
            if name is None:
                continue
            now = model.roles_of(user)
            for ranger_role in index.by_member.get(name.casefold(), ()):
                role = ranger_role[len(prefix) :]
                if ranger_role == self.naming.role(role) and role in model.roles and role not in now:
                    left.add(role)
        found: set[str] = set()
        for role in sorted(left):
            where: set[str] | None = None
            taken, twins = 0, False
            for holder in sorted(model.holders_of(role) - users):
                name = names.get(holder)
                if name is None or _inexact(name) is not None:
                    continue  # refused: no holder of the role in Ranger
                if folds.get(name.casefold(), 0) != 1:
                    twins = True  # compiled apart, or refused: no witness either way
                    continue
                member_of = index.by_member.get(name.casefold(), {})
                theirs = {d for ranger_role in member_of for d in index.by_role.get(ranger_role, ())}
                where = theirs if where is None else where & theirs
                taken += 1
                if not where or taken == 8:
                    break  # a few holders bound it (any subset of them is sound)
            if where is None and twins:
                return None
            found |= where or set()
        return found

    def _only_role_fact(
        self, model: Model, users: frozenset[str], identity: Identity, index: ReadIndex
    ) -> bool:
        """Whether the scope's changes are one user joining a role, and change no policy but
        the role's Ranger role (issue 30): proved from the model now, the memberships the
        last compile saw (the kept roles, :func:`~pushdown_ranger.compile.desired.seen_memberships`)
        and what Ranger holds (the model as of the changes before these, as every scoped
        sync takes it); else ``False``: the role's databases are compiled.

        The scope names the role ``R``'s holders (as a membership of ``R`` does) and the
        memberships seen differ from the model's only by user ``u`` holding ``R`` directly.
        ``u`` holds ``R`` alone, owns nothing, is no service admin, its Ranger name its own,
        and is a member of no Ranger role in the read: it held nothing Ranger names before
        (a role Ranger names has it as a member, a per-user role too; no role is refused),
        so it was in no item. Each other holder's Ranger roles in the read are those of its
        roles now (its own per-user role aside). One of them, ``v``, holds ``R`` alone, owns
        nothing, is no service admin, is named by no policy through its per-user role: ``u``
        now decides as ``v`` everywhere, so each item naming ``v`` names ``u`` too and no other
        item moves; ``R`` alone could cover ``v``, so ``R`` fitted each of those items and,
        holding ``u`` too, still fits them and covers ``u``. ``R``, one holder larger, moves
        ahead of roles as large or one larger in the choice of roles (largest first): a
        role sharing a holder with ``R`` could then add nobody new and be left out, so none
        may be of those sizes. Never with a mapping a plugin can change underneath, a
        refused role, a user whose Ranger name is refused or shared, nor a role nested by
        hand."""
        if not self.context.mapping_stable() or index.nested or self._folds is None:
            return False
        if refused_roles(model, self.naming):
            return False
        seen = seen_memberships(model)
        if seen is None or seen.role_groups != model.role_groups or seen.groups != model.groups:
            return False
        # the one direct membership the scope's users hold now and the last compile did not
        # see; then every other membership as seen (one comparison of dicts)
        moved = [
            (r, x) for x in users for r in model.user_roles.get(x, ()) if x not in seen.role_users.get(r, ())
        ]
        if len(moved) != 1:
            return False
        ((role, u),) = moved
        if not seen.joined_only(model, role, u):
            return False
        held = model.holders_of(role)
        if users != held or model.roles_of(u).keys() != {role}:
            return False
        names, folds = identity.names, self._folds[1]

        def named(user: str) -> bool:
            """Named as itself in Ranger: not refused, no twin (a holder the compile counts)."""
            name = names.get(user)
            return name is not None and _inexact(name) is None and folds.get(name.casefold(), 0) == 1

        def plain(user: str) -> bool:
            """Named as itself, owning nothing, no service admin: decides by its roles alone."""
            return named(user) and not model.owned_by.get(user) and user not in model.service_admins

        def unnamed(user: str) -> bool:
            """No policy names the user's per-user role."""
            mine = self.naming.user_role(user)
            return mine not in index.allowing_roles and mine not in index.denying_roles

        if not plain(u) or index.by_member.get(names[u].casefold()) or not unnamed(u):
            return False
        others = held - {u}
        if not others or not all(named(h) for h in others):
            return False
        for other in others:
            now = {self.naming.role(r) for r in model.roles_of(other)}
            read = set(index.by_member.get(names[other].casefold(), ())) - {self.naming.user_role(other)}
            if now != read:
                return False  # its memberships as Ranger holds them are not those of the model
        ranger_role = self.naming.role(role)
        if not any(model.roles_of(v).keys() == {role} and plain(v) and unnamed(v) for v in sorted(others)):
            return False
        if not all(ranger_role in index.by_member.get(names[h].casefold(), ()) for h in others):
            return False  # the role's Ranger role does not hold its other holders (as checked above)
        size = len(others)
        for other in {q for h in others for q in model.roles_of(h) if q != role}:
            holders = model.holders_of(other)
            if len(holders) in (size, size + 1) or not all(named(h) for h in holders):
                return False
        return True

    def _read_index(self, snapshot: RangerSnapshot) -> ReadIndex:
        """Of what a read holds (a sync then looks up by key, not by a pass over every
        policy and role): whether a role of pushdown's has a role nested by hand, the roles
        each member (folded) is in, the databases of the Hive policies shaped as pushdown
        writes them naming each role, the roles those name per database (folded), and the
        databases of Hive policies holding deny items. Kept, and moved to each read's facts
        by the facts that differ (:meth:`ReadIndex.moved`)."""
        service, prefix = self.naming.hive_service, self.naming.user_role_prefix
        facts = frozen(snapshot.facts)
        if self._index is None or (self._index.service, self._index.prefix) != (service, prefix):
            self._index = ReadIndex(service, prefix)
        return self._index.moved(facts)

    def within(
        self, model: Model, scope: Resolved, snapshot: RangerSnapshot | None = None
    ) -> Callable[[Fact], bool]:
        return covering(self.focus(model, scope, snapshot), self.naming.hive_service)

    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        assert isinstance(snapshot, RangerSnapshot)
        focus = self.focus(model, scope, snapshot)
        # the per-user roles the Hive policies outside the focus name (those it does not
        # cover): the compile keeps such a role only while a policy names it, and asks no
        # other name (a model role's Ranger role is kept whoever names it)
        elsewhere: frozenset[str] = frozenset()
        if focus is not None:
            databases = {s.names[1].casefold() for s in focus}
            by_database = self._read_index(snapshot).prefixed_by_database
            elsewhere = frozenset().union(*(r for d, r in by_database.items() if d not in databases))
        # the compile names users through the mapping: kept while its answers stand (the
        # hook's version, when no plugin can change them underneath; never otherwise)
        stable = self.context.mapping_stable()
        key = (
            id(model),
            model.version,
            self.context.mapping_version() if stable else None,
            focus,
            elsewhere,
            tuple(sorted(snapshot.deny.items())),
            snapshot.services,
            tuple(sorted(snapshot.voided.items())),
            snapshot.implied,
            snapshot.voiding,
            snapshot.overriding,
        )
        if stable and self._compiled is not None and self._compiled[0] == key:
            return self._compiled[1]
        fresh = None if focus is None else scope_users(scope)
        moved = members_moved(scope)
        desired = self._compile(model, snapshot, focus, elsewhere, self._identity(model, fresh), moved)
        # the model is kept alive with its answer, so no other model can reuse its id
        self._compiled = (key, desired, model)
        return desired

    def _identity(self, model: Model, fresh: Iterable[str] | None) -> Identity:
        """Every model user's Ranger name (:class:`KeptIdentity`, whole model): the users
        taken as kept while the model's roster stamps prove nobody was added or removed."""
        return self.kept.of(model.users, fresh, roster=(model, model.roster_stamped))

    def _compile(
        self,
        model: Model,
        snapshot: RangerSnapshot,
        focus: frozenset[ObjectRef] | None,
        elsewhere: frozenset[str],
        identity: Identity | None = None,
        moved: frozenset[str] | None = None,
    ) -> Desired:
        return compile_all(
            model,
            self.enforces(model),
            self.naming,
            snapshot.deny,
            focus=focus,
            elsewhere=elsewhere,
            hive=self.hive(model),
            voided=snapshot.voided,
            services=snapshot.services,
            implied=snapshot.implied,
            voiding=snapshot.voiding,
            overriding=snapshot.overriding,
            locations=self.context.locations,
            identity=identity,
            kept=self._classes,
            members_moved=moved,
        )


class ImpliedDatabases:
    """:func:`_implying_more` of one read's facts, with how many policies give each database:
    moved to the next read's by the facts that differ (a policy's answer is its own alone)."""

    def __init__(self, key: object, implied: Implied, service: str) -> None:
        self.key, self.service = key, service
        self.more = {access: rest for s, access, rest in implied if s == service}
        self.facts: Set[Fact] = frozenset()
        self.counts: dict[str, int] = {}

    def moved(self, facts: Set[Fact]) -> set[str]:
        if self.more and facts is not self.facts:
            gone, added = differ(self.facts, facts)
            for fact in gone:
                self._count(fact, -1)
            for fact in added:
                self._count(fact, 1)
            self.facts = facts
        return set(self.counts)

    def _count(self, fact: Fact, step: int) -> None:
        for database in _implying_databases(fact, self.service, self.more):
            _bump_one(self.counts, database, step)


def _implying_databases(fact: Fact, service: str, more: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The databases of a policy of ``service`` where an allow item of pushdown's grants, by
    ``more`` (access -> the accesses it implies), an access its role is not allowed there."""
    if not isinstance(fact, PolicyFact) or fact.service != service:
        return frozenset()
    if not any((r, x) not in fact.allow for r, a in fact.allow for x in more.get(a, ())):
        return frozenset()
    return frozenset(d for k, v, _ in fact.resources if k == "database" for d in v)


def _implying_more(snapshot: RangerSnapshot, service: str) -> set[str]:
    """Databases where an allow item pushdown holds grants, by the service definition's
    ``impliedGrants``, an access its role is not allowed there (over every fact)."""
    more = {access: rest for s, access, rest in snapshot.implied if s == service}
    if not more:
        return set()
    return {d for fact in snapshot.facts for d in _implying_databases(fact, service, more)}
