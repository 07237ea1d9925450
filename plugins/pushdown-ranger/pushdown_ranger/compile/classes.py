"""The Hive items of each class of users, per database, taken over from the last compile
(issue 30): a scoped sync of a one-table grant compiles the classes the change touches,
not the ~300 classes holding grants in that database.

What a class's items in one Hive database are made from (:func:`~pushdown_ranger.compile.hive.hive_items`:
``_hive_schema``, ``_hive_create``, ``_hive_barred``), read off the code:

- the class's view there: its decider reads the grants (ALLOW and DENY, gates included) of
  the class's roles on the objects it decides (the database and its children) and on
  their paths (the catalog, the metalake), whether the users are service admins, and what
  they own (an owner has a personal view); the coverage's stand-ins and exceptions read
  the inventory's children of the database;
- the barred users' DENYs there (on the database's path or one of its tables: grants of
  the same roles);
- the database's children as the compile holds them (registered or only named: their
  Ranger names, :class:`~pushdown_ranger.compile.hive_names.TableNames`), and which of them
  the model registers (a CREATE deny item guards a registered table only);
- the Hive service and whether it enables deny items.

So a class's items are kept under its *signature* in a database (the set of
(object, privilege, condition) its roles hold there and above, and whether its users
are service admins) and the database's *shape* (its children, those registered): equal
signature and shape give equal items, whoever the users are (they are applied afresh).
A shape that moved drops every kept class of that database; a class whose roles gained or
lost a grant there has a new signature. Owners (a personal view) are compiled every time.
What the items become afterwards (Ranger roles, names through the mapping, refused users
and roles, the implied-grants check) is computed afresh from the items every compile.

A class holding nothing but the gates' ALLOWs in a database, no service admin among its
users, adds nothing there (:meth:`Signer.deciding`, the rule :mod:`.deciding` leaves such users
out of a focused compile by): a user deciding in one database of a focus and holding only
the gates in another is taken over wherever its class is kept, not compiled again for want
of a class kept in the other (a whole compile visits a class's own databases only).

A user's signature in a database is made of its roles and their grants there: both are
kept between compiles of one model object (:class:`KeptSignatures`) while the model's stamps
of the user's roles and of each role's grants stand (:attr:`Model.roles_moved`,
:attr:`Model.grants_moved`), so a compile looks up the users deciding in its databases
rather than signing each again.

A class is kept only when every item it added named all of its users (or none): the
items then depend on the signature alone. Only the classes a compile asked for are kept
per database (the rest dropped), so the store is bounded by the estate's classes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from pushdown.decide.inventory import Inventory
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model, stamp_now
from pushdown_ranger.compile.deciding import GATES, deciding_users
from pushdown_ranger.compile.hive_names import TableNames, unnamable_schemas
from pushdown_ranger.compile.naming import Items
from pushdown_ranger.facts import Resource

#: (service admins?, the (object, privilege, condition) of the class's grants in the database and above)
Signature = tuple[bool, frozenset[tuple[ObjectRef, Privilege, Condition]]]
#: an item a class added: (deny, service, resources, access, whether it names the class's users)
Added = tuple[bool, str, tuple[Resource, ...], str, bool]
#: (the database's children as compiled, those the model registers)
Shape = tuple[frozenset[ObjectRef], frozenset[ObjectRef]]


class Recorder(Items):
    """:class:`Items` remembering each addition, to keep and to add to the compile's items."""

    def __init__(self) -> None:
        super().__init__()
        self.added: list[tuple[bool, str, tuple[Resource, ...], str, frozenset[str]]] = []

    def add(
        self, deny: bool, service: str, res: tuple[Resource, ...], access: str, users: Iterable[str]
    ) -> None:
        self.added.append((deny, service, res, access, frozenset(users)))

    def into(self, items: Items) -> None:
        for deny, service, res, access, users in self.added:
            items.add(deny, service, res, access, users)

    def kept(self, users: frozenset[str]) -> tuple[Added, ...] | None:
        """The additions without their users, when each named all of ``users`` or none."""
        out: list[Added] = []
        for deny, service, res, access, who in self.added:
            if who and who != users:
                return None
            out.append((deny, service, res, access, bool(who)))
        return tuple(out)


def replay(items: Items, added: tuple[Added, ...], users: frozenset[str]) -> None:
    for deny, service, res, access, named in added:
        items.add(deny, service, res, access, users if named else ())


@dataclass
class Database:
    """One Hive database's kept classes, for one compile: those of the last compile (while
    its shape stands) are looked up, those asked for now are kept."""

    shape: Shape
    names: TableNames
    previous: dict[Signature, tuple[Added, ...]]
    entries: dict[Signature, tuple[Added, ...]] = field(default_factory=dict)
    #: the same object while the database's kept classes are carried from compile to
    #: compile (its shape standing); a new one when they start afresh
    lineage: object = field(default_factory=object)

    def get(self, signature: Signature) -> tuple[Added, ...] | None:
        hit = self.entries.get(signature)
        if hit is None:
            hit = self.previous.get(signature)
            if hit is not None:
                self.entries[signature] = hit
        return hit

    def put(self, signature: Signature, added: tuple[Added, ...]) -> None:
        self.entries[signature] = added

    def carry(self) -> None:
        """Every class of the last compile kept (a kept split takes users over by their
        signatures without asking each: :meth:`HiveClasses.split`)."""
        merged = dict(self.previous)
        merged.update(self.entries)
        self.entries = merged


Grants = frozenset[tuple[ObjectRef, Privilege, Condition]]


class KeptSignatures:
    """Each user's roles and its roles' grants per database (what its signature there is
    made of), kept between compiles of one model object (:attr:`model`): a user's entry
    stands while the user's stamp (:attr:`Model.roles_moved`: its roles, directly and
    through groups) and each of its roles' (:attr:`Model.grants_moved`) are those it was
    made at; otherwise it is made again, its databases' grants asked afresh. A user or role
    the model never stamped (filled without events) is never kept. ``made``: the entries
    made (a count for the cost tests)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        #: user -> (its stamp, its roles with their stamps, its roles, database -> grants)
        self.users: dict[
            str, tuple[int, tuple[tuple[str, int | None], ...], frozenset[str], dict[ObjectRef, Grants]]
        ] = {}
        self.made = 0

    def of(self, user: str) -> tuple[frozenset[str], dict[ObjectRef, Grants]]:
        """The user's roles now, and its grants per database as kept (a caller adds those it
        makes)."""
        model = self.model
        stamp = model.roles_moved.get(user)
        hit = self.users.get(user)
        if hit is not None and stamp is not None and hit[0] == stamp:
            moved = model.grants_moved
            if all(moved.get(role) == at for role, at in hit[1]):
                return hit[2], hit[3]
        self.made += 1
        roles = frozenset(model.roles_of(user))
        stamps = tuple((role, model.grants_moved.get(role)) for role in roles)
        if stamp is None or any(at is None for _, at in stamps):
            self.users.pop(user, None)
            return roles, {}  # not kept
        entry = self.users[user] = (stamp, stamps, roles, {})
        return roles, entry[3]


class Signer:
    """Signatures in one database (``schema``): each role's grants there and above, once.

    Found through the model's grant index by object (the objects on the schema's path,
    and those below it carrying a grant: :meth:`Model.marked_within`), not by a pass over
    each role's every grant: the grants of the database and above, asked once per compile.
    A user's grants here are taken from ``signed`` (kept between compiles while its roles
    and their grants stand) when it holds them, and put there when made."""

    def __init__(self, model: Model, schema: ObjectRef, signed: KeptSignatures | None = None) -> None:
        self.model = model
        self.schema = schema
        self.signed = signed
        self._roles: dict[str, Grants] = {}
        self._held: dict[frozenset[str], Grants] = {}
        self._users: dict[str, Signature] = {}
        #: the grants on the schema's path, with their holders; those below it, by role
        #: (made at the first role asked: a whole compile asks none)
        self._up: list[tuple[tuple[ObjectRef, Privilege, Condition], AbstractSet[str]]] | None = None
        self._below: dict[str, list[tuple[ObjectRef, Privilege, Condition]]] = {}
        self._deciding: frozenset[str] | None = None

    def of(
        self, user: str, roles: frozenset[str] | None = None, kept: dict[ObjectRef, Grants] | None = None
    ) -> Signature:
        """``roles``: the user's roles in the model, and ``kept``: its grants per database
        kept (:meth:`KeptSignatures.of`), when the caller has them (the split asks each
        user's in every database of the compile)."""
        hit = self._users.get(user)  # asked again by the split and by the items
        if hit is None:
            if roles is None:
                roles, kept = (
                    self.signed.of(user)
                    if self.signed is not None
                    else (frozenset(self.model.roles_of(user)), None)
                )
            grants = None if kept is None else kept.get(self.schema)
            if grants is None:
                grants = self.grants(roles)
                if kept is not None:
                    kept[self.schema] = grants
            hit = self._users[user] = (user in self.model.service_admins, grants)
        return hit

    def grants(self, roles: frozenset[str]) -> Grants:
        """The grants of ``roles`` in the database and above."""
        grants = self._held.get(roles)
        if grants is None:
            grants = self._held[roles] = frozenset().union(*(self._role(r) for r in roles))
        return grants

    def deciding(self) -> frozenset[str]:
        """The roles holding something here beyond the gates' ALLOWs (:data:`GATES`): a DENY,
        or an ALLOW of more, on the database's path or below it. A user holding none of
        them, no service admin, is allowed nothing in the database and denied nothing
        there, as :func:`~pushdown_ranger.compile.deciding.deciding_users` leaves out the
        users holding no more: its items there are none, whatever the database holds (an
        owner is compiled apart), and no signature is needed."""
        if self._deciding is None:
            by_object = self.model.by_object
            found: set[str] = set()
            for obj in (*self.schema.path, *self.model.marked_within(self.schema)):
                for privilege, conditions in by_object.get(obj, {}).items():
                    for condition, holders in conditions.items():
                        if condition is Condition.DENY or privilege not in GATES:
                            found |= holders
            self._deciding = frozenset(found)
        return self._deciding

    def group(self, users: Iterable[str]) -> Signature | None:
        """The users' one signature (``None`` when they differ)."""
        found = {self.of(u) for u in users}
        return next(iter(found)) if len(found) == 1 else None

    def _index(self) -> list[tuple[tuple[ObjectRef, Privilege, Condition], AbstractSet[str]]]:
        by_object = self.model.by_object
        schema = self.schema
        up: list[tuple[tuple[ObjectRef, Privilege, Condition], AbstractSet[str]]] = []
        for obj in schema.path:
            for privilege, conditions in by_object.get(obj, {}).items():
                up += (((obj, privilege, c), holders) for c, holders in conditions.items())
        below = self._below
        for obj in self.model.marked_within(schema):
            if obj == schema:
                continue  # on the path
            for privilege, conditions in by_object.get(obj, {}).items():
                for condition, holders in conditions.items():
                    grant = (obj, privilege, condition)
                    for role in holders:
                        below.setdefault(role, []).append(grant)
        self._up = up
        return up

    def _role(self, role: str) -> Grants:
        hit = self._roles.get(role)
        if hit is None:
            up = self._up if self._up is not None else self._index()
            mine = [grant for grant, holders in up if role in holders]
            mine += self._below.get(role, ())
            hit = self._roles[role] = frozenset(mine)
        return hit


_NOTHING: tuple[Added, ...] = ()


class KeptClasses:
    """The classes' items per Hive database (by schema, service and deny items), kept by the
    backend between compiles. ``compiled``: classes whose items were made afresh, per
    database (a count for the cost tests)."""

    def __init__(self) -> None:
        self._databases: dict[tuple[ObjectRef, str, bool], Database] = {}
        self.compiled = 0
        self._signed: KeptSignatures | None = None
        #: the grant stamps proved since the splits were kept (:class:`GrantChain`), and the
        #: last split of each set of databases (:class:`KeptSplit`); ``split``: users split
        #: (a count for the cost tests), ``reused``: splits kept and split again in part
        self.chain: GrantChain | None = None
        self.splits: dict[tuple[object, ...], KeptSplit] = {}
        self.split = 0
        self.reused = 0
        #: each Hive database's items as its last compile made them (:class:`KeptItems`), by
        #: schema, service and deny items; ``focused``: compiles of a database's moved
        #: tables alone, ``redecided``: users decided again in them (counts for the tests)
        self.outputs: dict[tuple[ObjectRef, str, bool], KeptItems] = {}
        self.focused = 0
        self.redecided = 0
        #: users decided again over a whole database in them (their roles were stamped)
        self.redecided_whole = 0

    def signed_for(self, model: Model) -> KeptSignatures:
        """The users' signatures kept for ``model`` (the one model object kept alive with
        them: another model starts afresh, so no stamp of one is read against another)."""
        if self._signed is None or self._signed.model is not model:
            self._signed = KeptSignatures(model)
        return self._signed

    def database(
        self, model: Model, inventory: Inventory, schema: ObjectRef, service: str, deny: bool
    ) -> Database:
        """The database's kept classes for a compile now, its table names with them."""
        now = shape(model, inventory, schema)
        key = (schema, service, deny)
        last = self._databases.get(key)
        if last is not None and last.shape == now:
            db = Database(now, last.names, last.entries, lineage=last.lineage)
        else:
            kids = inventory.children(schema)
            db = Database(now, TableNames.of([t for t in kids if t.type is SecurableType.TABLE]), {})
        self._databases[key] = db
        return db


def shape(model: Model, inventory: Inventory, schema: ObjectRef) -> Shape:
    """The database's children as the compile holds them, and those the model registers."""
    kids = frozenset(inventory.children(schema))
    return (kids, frozenset(kids & model.objects.keys()))  # in C, not a pass per table


#: chain entries beyond which the oldest half is dropped (splits kept before it then split again)
_CHAIN_KEPT = 512
#: kept splits beyond which they are all dropped
_SPLITS_KEPT = 1024


class GrantChain:
    """Which roles' grants moved, compile after compile, proved by the model's stamps
    (issue 30): at each split the model's count of grant stamps (:attr:`Model.grants_stamped`)
    moved by exactly as many as the roles of a hint (the databases' deciding roles) whose
    stamps are newer than the latest seen, so each of them was stamped once and no other
    role was; and the count of role stamps (:attr:`Model.roles_stamped`) did not move, so
    nobody's roles moved. Each proved step's roles are logged: a split kept at a position
    of the chain is split again only for the holders of the roles logged since. Any step
    not proved (another model object: a copy, a directory view; a model whose users or
    roles lack stamps; a membership; a role stamped outside the hint, twice, or not at
    all as the hint has it) starts the chain afresh, past every kept position."""

    def __init__(self, model: Model, base: int, trusted: bool | None = None) -> None:
        self.model = model
        self.base = base
        self.log: list[frozenset[str]] = []
        self.roles_stamped = model.roles_stamped
        self.grants_stamped = model.grants_stamped
        self.latest = stamp_now()  # every stamp the model holds is older
        # a model filled without events: a role or user never stamped proves nothing (asked
        # once per model object: its events stamp every user and role they make)
        if trusted is None:
            trusted = (
                model.roles.keys() <= model.grants_moved.keys() and model.users <= model.roles_moved.keys()
            )
        self.trusted = trusted

    @property
    def position(self) -> int:
        return self.base + len(self.log)

    def proved(self, model: Model, hint: AbstractSet[str]) -> bool:
        """Moved to the model now by one proved step (``False``: not proved)."""
        if model is not self.model or not self.trusted or model.roles_stamped != self.roles_stamped:
            return False
        moved = model.grants_moved
        since = [r for r in hint if moved.get(r, 0) > self.latest]
        if model.grants_stamped - self.grants_stamped != len(since):
            return False
        if since:
            self.log.append(frozenset(since))
            self.latest = max(self.latest, *(moved[r] for r in since))
            self.grants_stamped = model.grants_stamped
        if len(self.log) > _CHAIN_KEPT:
            half = len(self.log) // 2
            self.base, self.log = self.base + half, self.log[half:]
        return True

    def since(self, position: int) -> frozenset[str] | None:
        """The roles whose grants moved since ``position`` (``None``: not known, before the
        chain started afresh)."""
        if position < self.base or position > self.position:
            return None
        return frozenset().union(*self.log[position - self.base :])


@dataclass
class KeptSplit:
    """One split's answer, per user, kept for the next compile of the same databases and
    starts: what it was made from (the users asked, the refused users, the owners on the
    starts' paths or below, the service admins, each database's lineage of kept classes),
    the users compiled, those taken out by their signature per database, and where each
    taken user is."""

    at: int
    lineage: tuple[object, ...]
    users: frozenset[str]
    refused: frozenset[str]
    owners: frozenset[str]
    admins: frozenset[str]
    fresh: set[str] = field(default_factory=set)
    taken: dict[ObjectRef, dict[Signature, tuple[tuple[Added, ...], set[str]]]] = field(default_factory=dict)
    where: dict[str, list[tuple[ObjectRef, Signature]]] = field(default_factory=dict)

    def forget(self, users: Iterable[str]) -> None:
        for user in users:
            self.fresh.discard(user)
            for schema, signature in self.where.pop(user, ()):
                by_signature = self.taken[schema]
                held = by_signature[signature][1]
                held.discard(user)
                if not held:
                    del by_signature[signature]


def lineages(databases: Iterable[Database]) -> tuple[object, ...]:
    """Each database's lineage of kept classes (:attr:`Database.lineage`)."""
    return tuple(db.lineage for db in databases)


def owners_at(model: Model, starts: Iterable[ObjectRef]) -> frozenset[str]:
    """The users owning something on the paths of ``starts`` or below them (by key: the
    paths and the objects marked below, :meth:`Model.marked_within`)."""
    owners = model.owners
    return frozenset(owners[o] for s in starts for o in (*s.path, *model.marked_within(s)) if o in owners)


class HiveClasses:
    """One compile's Hive databases of catalog ``root`` (those of ``focus``, or every one),
    with their kept classes: what ``hive_items`` takes over and what it keeps.

    ``split``: before the entitlement compiler runs, the users whose every database's items
    are kept (by their signature there) are taken out of it; their items are added from
    the kept ones (:meth:`replay`). Only for a focused compile whose views look into every
    database of the focus: each is a start of the compile (a view's containers of a start
    that is a schema are the start itself), so a kept class's items are those a view made
    there."""

    def __init__(
        self,
        kept: KeptClasses,
        model: Model,
        inventory: Inventory,
        root: ObjectRef,
        focus: frozenset[ObjectRef] | None,
        service: str,
        deny: bool,
    ) -> None:
        self.kept = kept
        self.model = model
        self.service, self.deny = service, deny
        schemas = sorted(
            (s for s in inventory.children(root) if s.type is SecurableType.SCHEMA), key=lambda o: o.names
        )
        self.schemas = schemas
        self.skipped = unnamable_schemas(schemas, model)
        self.databases: dict[ObjectRef, Database] = {}
        self.signers: dict[ObjectRef, Signer] = {}
        for schema in schemas:
            if schema in self.skipped or (focus is not None and schema not in focus):
                continue
            self.databases[schema] = kept.database(model, inventory, schema, service, deny)
            self.signers[schema] = Signer(model, schema, kept.signed_for(model))
        #: per database, the users taken out of the compiler, by their signature there (with
        #: its kept items)
        self.taken: dict[ObjectRef, dict[Signature, tuple[tuple[Added, ...], set[str]]]] = {}

    @property
    def shapes(self) -> dict[ObjectRef, TableNames]:
        return {schema: db.names for schema, db in self.databases.items()}

    def split(self, users: Iterable[str], refused: frozenset[str], starts: Iterable[ObjectRef]) -> list[str]:
        """The users to compile: those owning something on the paths of ``starts`` or below
        them (a personal view), and those with a class not kept in one of the databases;
        the others are taken out (users the model does not know and refused users get
        nothing either way).

        The last split of the same databases and starts is kept (:class:`KeptSplit`) and
        only some users are split again, when the model's stamps prove what moved since
        (:class:`GrantChain`): nobody's roles, and the grants of the roles logged since,
        whose holders are split again, with the users compiled last time, the owners then
        and now, the service admins and refused users that changed, and each database's
        kept classes carried over since (its lineage). Anything else splits every user."""
        model = self.model
        starts = list(starts)
        kept = self.kept
        deciding = {schema: signer.deciding() for schema, signer in self.signers.items()}
        chain = kept.chain
        if chain is None or not chain.proved(model, frozenset().union(*deciding.values())):
            # the chain starts afresh, past every position a split was kept at
            trusted = chain.trusted if chain is not None and chain.model is model else None
            chain = kept.chain = GrantChain(model, 0 if chain is None else chain.position + 1, trusted)
        asked = frozenset(users)
        key = (tuple(self.databases), tuple(starts))
        lineage = lineages(self.databases.values())
        owners, admins = owners_at(model, starts), frozenset(model.service_admins)
        last = kept.splits.pop(key, None)  # put back once made current
        redo = None if last is None or last.lineage != lineage else self._again(last, asked, refused, owners)
        if last is None or redo is None:
            state = KeptSplit(chain.position, lineage, asked, refused, owners, admins)
            redo = asked
        else:
            state = last
            kept.reused += 1
            state.forget(redo)
            for db in self.databases.values():
                db.carry()
            redo = redo & asked
        stamped = self._split(redo, refused, starts, deciding, state)
        state.at, state.users, state.refused, state.owners, state.admins = (
            chain.position,
            asked,
            refused,
            owners,
            admins,
        )
        if chain.trusted and stamped:
            if len(kept.splits) >= _SPLITS_KEPT:
                kept.splits.clear()
            kept.splits[key] = state
        self.taken = state.taken
        return list(state.fresh)

    def _again(
        self, last: KeptSplit, asked: frozenset[str], refused: frozenset[str], owners: frozenset[str]
    ) -> frozenset[str] | None:
        """The users ``last`` must be split again for (``None``: every user)."""
        chain = self.kept.chain
        assert chain is not None
        moved = chain.since(last.at)
        if moved is None:
            return None
        for schema, db in self.databases.items():
            if len(db.previous) > 4 * len(last.taken.get(schema, ())) + 256:
                return None  # classes nobody takes kept since: made again, the rest dropped
        model = self.model
        redo = set(last.fresh) | owners | last.owners
        redo |= (last.admins ^ model.service_admins) | (last.refused ^ refused)
        for role in moved:
            redo |= model.holders_of(role)
        # whom something in the databases decides for moves only with the roles whose
        # grants moved (nobody's roles moved): anyone else is a change not proved
        if not (asked ^ last.users) <= redo:
            return None
        return frozenset(redo)

    def _split(
        self,
        users: Iterable[str],
        refused: frozenset[str],
        starts: list[ObjectRef],
        deciding: dict[ObjectRef, frozenset[str]],
        state: KeptSplit,
    ) -> bool:
        """``users`` split into ``state``; whether each was signed by kept stamps (a model
        filled without events: the split is not kept)."""
        model = self.model
        signed, admins = self.kept.signed_for(model), model.service_admins
        stamped = True
        for user in users:
            self.kept.split += 1
            if user not in model.users or user in refused:
                continue
            owned = model.owned_by.get(user, ())
            if any(s in o.path or o in s.path for o in owned for s in starts):
                state.fresh.add(user)
                continue
            # the user's roles and its grants per database, kept while they stand; asked
            # once, not once a database
            roles, kept = signed.of(user)
            stamped = stamped and user in signed.users
            admin = user in admins
            found: list[tuple[ObjectRef, Signature | None, tuple[Added, ...] | None]] = []
            for schema, db in self.databases.items():
                signer = self.signers[schema]
                if not admin and roles.isdisjoint(deciding[schema]):
                    # nothing but the gates' ALLOWs here: nothing of theirs (a user deciding
                    # in another database of the focus only)
                    found.append((schema, None, _NOTHING))
                    continue
                signature = signer.of(user, roles, kept)
                found.append((schema, signature, db.get(signature)))
            if any(added is None for _, _, added in found):
                state.fresh.add(user)
                continue
            where = state.where[user] = []
            for schema, mine, added in found:
                if added and mine is not None:
                    state.taken.setdefault(schema, {}).setdefault(mine, (added, set()))[1].add(user)
                    where.append((schema, mine))
        return stamped

    def seed(self, inventory: Inventory, refused: frozenset[str]) -> None:
        """After a whole compile: each database's split kept as a compile focused on that
        database alone makes it (its deciding users, from its own start), so the first
        one-table change there splits again only whom the stamps prove moved."""
        model = self.model
        for schema in list(self.databases):
            one = copy.copy(self)
            one.databases = {schema: self.kept.database(model, inventory, schema, self.service, self.deny)}
            one.signers = {schema: Signer(model, schema, self.kept.signed_for(model))}
            one.taken = {}
            one.split(deciding_users(model, [schema]), refused, [schema])

    def replay(self, items: Items) -> None:
        """The kept items of the users taken out of the compiler."""
        for by_signature in self.taken.values():
            for added, users in by_signature.values():
                replay(items, added, frozenset(users))


#: an object's grants and owner as the model held them (:func:`held_at`)
Held = tuple[dict[Privilege, dict[Condition, frozenset[str]]] | None, str | None]
#: a database's items, by (service, resources): (access -> users allowed, access -> users denied)
DatabaseItems = dict[
    tuple[str, tuple[Resource, ...]], tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]
]


def held_at(model: Model, obj: ObjectRef) -> Held:
    """``obj``'s grants (privilege -> condition -> roles) and owner in the model now, copied."""
    grants = model.by_object.get(obj)
    if grants is None:
        return None, model.owners.get(obj)
    frozen = {p: {c: frozenset(r) for c, r in by.items()} for p, by in grants.items()}
    return frozen, model.owners.get(obj)


_NOT_HELD: Held = (None, None)


def _same_held(model: Model, obj: ObjectRef, held: Held) -> bool:
    """Whether ``obj``'s grants and owner in the model are ``held`` (dicts compared in C:
    a frozenset equals a set of the same roles)."""
    return model.by_object.get(obj) == held[0] and model.owners.get(obj) == held[1]


# the checks of :meth:`KeptItems.moved`, one function each (a test removes one at a time)


def _no_deny(held: Held) -> bool:
    """No DENY among the grants ``held`` (``_hive_barred`` then adds nothing there)."""
    return held[0] is None or not any(Condition.DENY in by for by in held[0].values())


#: users whose roles were stamped since a database's items were kept beyond which the
#: database is compiled (each is decided again over the whole database)
STAMPED_BOUND = 64


def _users_stamped(model: Model, kept: KeptItems) -> frozenset[str] | None:
    """The users whose roles were stamped since (a membership, a group's member, a user
    added or removed, a role deleted: :meth:`Model.stamped_since`); ``None``: not known (the
    model's log no longer reaches back so far) or more than :data:`STAMPED_BOUND`."""
    since = model.stamped_since(kept.roles_stamped)
    return None if since is None or len(since) > STAMPED_BOUND else since


def _principals_stand(model: Model, kept: KeptItems, refused: tuple[frozenset[str], frozenset[str]]) -> bool:
    """The service admins and the users and roles Ranger cannot name are those of then."""
    return model.service_admins == kept.admins and (kept.refused_users, kept.refused_roles) == refused


def _shape_stands(model: Model, schema: ObjectRef, kept: KeptItems) -> bool:
    """The database's registered children are those of then, and every object it gained
    or lost a grant or owner on is one of them (the compile's inventory of it stands)."""
    if model.kids.get(schema, frozenset()) != kept.kids:
        return False
    return all(obj in kept.kids for obj in model.marked_within(schema) ^ kept.marked)


def _path_stands(model: Model, schema: ObjectRef, kept: KeptItems) -> bool:
    """The grants and owner of the database, the catalog and the metalake are those of
    then (every table's default, the gates), and none of them is a DENY (it bars on every
    table: ``_hive_barred``)."""
    stamps, kept_stamps = model.held_stamps, kept.stamps
    return all(
        (_stamp_stands(stamps.get(o), kept_stamps.get(o)) or _same_held(model, o, kept.held[o]))
        and _no_deny(kept.held[o])
        for o in schema.path
    )


def _stamp_stands(now: int | None, then: int | None) -> bool:
    """The object's grants and owner unmoved since, by its stamp (:attr:`Model.held_stamps`):
    a stamp is new on every change, so one kept and still there proves it; none (never
    stamped, or the model's indexes rebuilt since) proves nothing (the grants are compared)."""
    return now is not None and now == then


def _named_alone(obj: ObjectRef, schema: ObjectRef, kept: KeptItems) -> bool:
    """``obj`` is a registered table of the database with a Ranger name of its own (no
    case twin, a name Ranger reads as itself)."""
    if obj.type is not SecurableType.TABLE or obj.parent != schema or obj not in kept.kids:
        return False
    name = kept.names.resource.get(obj)
    return name is not None and len(kept.names.twins[name]) == 1


def _owner_stands(was: Held, now: Held) -> bool:
    """The object's owner is the one of then (an owner decides by a personal view)."""
    return was[1] == now[1]


@dataclass
class KeptItems:
    """One Hive database's items as the last compile of it made them (every class's and
    owner's, by resources and access), with what they were made from, as far as a later
    compile of that database must prove it unmoved to take them over and decide again
    only the users of the tables whose grants moved (issue 30: a focus of tables):

    - the model object, its count of role stamps (:attr:`Model.roles_stamped`: the users
      whose roles moved since are found by it, :meth:`Model.stamped_since`), the service
      admins, the refused users and roles;
    - the grants and owner of every object on the database's path and every object at or
      below it carrying a grant or an owner (:meth:`Model.marked_within`), as the model
      held them (:func:`held_at`): what any class's view there reads of the model;
    - the database's registered children and its marked objects (with the children the
      compile's inventory of it: its shape), and their Ranger names (:class:`TableNames`);
    - the Hive notes of the database (its names')."""

    model: Model
    roles_stamped: int
    admins: frozenset[str]
    refused_users: frozenset[str]
    refused_roles: frozenset[str]
    held: dict[ObjectRef, Held]
    kids: frozenset[ObjectRef]
    marked: frozenset[ObjectRef]
    names: TableNames
    notes: list[str]
    items: DatabaseItems
    #: the path's objects' stamps (:attr:`Model.held_stamps`) when ``held`` was copied
    stamps: dict[ObjectRef, int | None] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        model: Model,
        schema: ObjectRef,
        names: TableNames,
        items: DatabaseItems,
        refused: tuple[frozenset[str], frozenset[str]],
        above: dict[ObjectRef, Held],
    ) -> KeptItems:
        """``above``: the path's objects' :func:`held_at`, shared by the databases of one compile."""
        marked = frozenset(model.marked_within(schema))
        held = {o: above[o] if o in above else above.setdefault(o, held_at(model, o)) for o in schema.path}
        held.update((o, held_at(model, o)) for o in marked if o not in held)
        return cls(
            model,
            model.roles_stamped,
            frozenset(model.service_admins),
            refused[0],
            refused[1],
            held,
            frozenset(model.kids.get(schema, ())),
            marked,
            names,
            names.notes(schema),
            items,
            {o: model.held_stamps.get(o) for o in schema.path},
        )

    def moved(
        self, model: Model, schema: ObjectRef, refused: tuple[frozenset[str], frozenset[str]]
    ) -> tuple[dict[ObjectRef, set[str]], frozenset[str]] | None:
        """The tables whose grants moved since these items were made, each with the roles
        whose grants on it moved, and the users whose roles were stamped since (a
        membership, a group's member, a user added or removed, a role deleted: their items
        anywhere in the database can have moved, :func:`_users_stamped`); ``None`` when
        anything else can have moved the database's items: another model object, role
        stamps not known or too many, the service admins, the refused users or roles, the database's
        children or marked objects (a table created, dropped, renamed, named by a first
        grant unregistered), a grant or owner on the database's path (the database, the
        catalog, the metalake: every table's default), an owner anywhere in it, a DENY on
        the path or on a moved table (before or after: ``_hive_barred``), a moved object
        that is no registered table of the database Ranger names alone (no case twin)."""
        stamped = None if model is not self.model else _users_stamped(model, self)
        if stamped is None:
            return None
        if not _principals_stand(model, self, refused) or not _shape_stands(model, schema, self):
            return None
        if not _path_stands(model, schema, self):
            return None
        held = self.held
        marked = model.marked_within(schema)
        out: dict[ObjectRef, set[str]] = {}
        for obj in (*marked, *(self.marked - marked)):
            if obj == schema:
                continue
            was = held.get(obj, _NOT_HELD)
            if _same_held(model, obj, was):
                continue
            now = held_at(model, obj)
            if not _named_alone(obj, schema, self) or not _owner_stands(was, now):
                return None
            if not (_no_deny(was) and _no_deny(now)):
                return None
            out[obj] = _moved_roles(was[0] or {}, now[0] or {})
        return out, stamped

    def moved_on(
        self, model: Model, schema: ObjectRef, items: DatabaseItems, tables: Iterable[ObjectRef]
    ) -> KeptItems:
        """These items moved to ``items``, after a compile of the moved ``tables`` alone
        and of the users stamped since over the whole database (the stamps counted now)."""
        held = dict(self.held)
        for table in tables:
            held[table] = held_at(model, table)
        marked = frozenset(model.marked_within(schema))
        for gone in self.marked - marked:
            held.pop(gone, None)
        return KeptItems(
            model,
            model.roles_stamped,
            self.admins,
            self.refused_users,
            self.refused_roles,
            held,
            self.kids,
            marked,
            self.names,
            self.notes,
            items,
            self.stamps,
        )


def _moved_roles(
    was: Mapping[Privilege, Mapping[Condition, AbstractSet[str]]],
    now: Mapping[Privilege, Mapping[Condition, AbstractSet[str]]],
) -> set[str]:
    """The roles whose grants differ between ``was`` and ``now`` (one object's)."""
    roles: set[str] = set()
    for privilege in was.keys() | now.keys():
        before, after = was.get(privilege, {}), now.get(privilege, {})
        for condition in before.keys() | after.keys():
            roles |= set(before.get(condition, ())) ^ set(after.get(condition, ()))
    return roles
