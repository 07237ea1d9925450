"""Compile the model into the roles and policies Ranger should hold. Pure.

The core's entitlement compiler decides, set-wise, for classes of users (the same roles
where it matters, owners apart), with DENY and the USE_CATALOG / USE_SCHEMA gates
included. Ranger has no "use" gate, and one user's decision can depend on the
combination of roles they hold (a DENY of one role beats the ALLOW of another), so a
grant is not pushed role by role. Instead, for every resource and access, the users
the model allows form a set, and that set is written as Ranger roles:

- the Ranger role of a model role when *every* holder of that role is in the set
  (exact: the role's items say nothing about anybody outside it);
- a per-user Ranger role (``user_role_prefix`` + user) for the rest.

Shapes, per Hive database ``d``:

- ``database=d``: the database-level accesses (``alter``, ``drop``);
- ``database=d, table=?*, column=*``: what a user may do on every table of ``d``,
  present and future (the compiler's coverage default), ``create`` (CREATE TABLE, asked on
  the new table) included; ``?*`` rather than ``*``, which Ranger would also match
  against the database itself (``alter``, ``drop`` there);
- ``database=d, table=t, column=*``: the exceptions: allow items where ``t`` allows
  more than the wildcard, deny items where it allows less (a DENY on ``t``, a gate).
  Without deny items (the service definition does not enable them), a user whose
  wildcard access has an exception gets per-table items instead (exact, no wildcard).

Topics and filesets get one policy per Ranger resource (``topic=t``; ``path=<location>``),
over every enforced catalog at once (:mod:`pushdown_ranger.compile.leaves`).

What is compiled is every object registered below the enforced catalogs and every object
a grant or an owner names there (:mod:`pushdown_ranger.held`); Ranger roles hold users,
never groups, and names Ranger would read otherwise are refused
(:mod:`pushdown_ranger.principals`); names equal but for case are one Hive resource
(:mod:`pushdown_ranger.hive_names`).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from pushdown.decide.compiler import EntitlementCompiler, Entitlements
from pushdown.decide.inventory import Inventory
from pushdown.decide.views import OwnerView
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.plan import Fact
from pushdown_ranger import factsets
from pushdown_ranger.compile.classes import DatabaseItems, Held, HiveClasses, KeptClasses, KeptItems
from pushdown_ranger.compile.deciding import decides_for, deciding_users
from pushdown_ranger.compile.hive import hive_database, hive_every_table, hive_items, hive_table, table_items
from pushdown_ranger.compile.leaves import leaf_items
from pushdown_ranger.compile.naming import Group, Items, RangerNaming, exact
from pushdown_ranger.compile.objects import (
    held_in_focus,
    held_objects,
    holds_tables,
    leaf_schemas,
    with_case_twins,
)
from pushdown_ranger.compile.principals import Principals, principals
from pushdown_ranger.facts import Pair, PolicyFact, Resource, RoleFact, interned
from pushdown_ranger.factsets import Spread, joined, kept_moved
from pushdown_ranger.mapping import OPERATIONS

T = SecurableType
__all__ = [
    "Items",
    "RangerNaming",
    "compile_desired",
    "hive_catalog",
    "hive_database",
    "hive_every_table",
    "hive_table",
]


def hive_catalog(model: Model, catalogs: Iterable[str]) -> str | None:
    """The catalog whose tables the Hive service holds: the first enforced catalog (by
    name) with tables (registered, or named by a grant); only when none has any, the first
    with no topics or filesets. A new empty catalog never takes the service from one
    holding tables (pushdown's deny items there would go)."""
    roots = [ObjectRef(T.CATALOG, (c,)) for c in sorted(catalogs)]
    roots = [r for r in roots if r in model.objects]
    for root in roots:
        if holds_tables(model, root.names[0]):
            return root.names[0]
    for root in roots:
        if not {o.type for o in model.within(root)}.intersection({T.TOPIC, T.FILESET}):
            return root.names[0]
    return None


def compile_desired(
    model: Model,
    catalogs: Iterable[str],
    naming: RangerNaming,
    deny_enabled: Mapping[str, bool],
    *,
    focus: frozenset[ObjectRef] | None = None,
    named_elsewhere: frozenset[str] = frozenset(),
    hive: str | None = "\x00unknown",
    locations: Mapping[str, tuple[str, ...]] | None = None,
    mirrored: frozenset[str] = frozenset(),
    who: Principals | None = None,
    kept: KeptClasses | None = None,
    members_moved: frozenset[str] | None = None,
) -> Desired:
    """The roles and policies Ranger should hold. ``focus``: only the Hive databases of
    these schemas are compiled (``None``: everything); topics and filesets always are.
    ``named_elsewhere``: Ranger roles the policies outside the focus still name (only the
    per-user roles' names are asked: a model role's Ranger role is kept whoever names it).
    ``hive``: :func:`hive_catalog`, when the caller knows it already. ``locations``: the
    configured storage roots per catalog (a fileset outside them is pushed for nobody).
    ``mirrored``: databases other catalogs sharing the Hive service hold, compiled as
    schemas of ``hive`` nobody registered (:func:`~pushdown_ranger.compile.shared.mirrored`).
    ``who``: :func:`~pushdown_ranger.compile.principals.principals`, when the caller has it.
    ``kept``: the classes' Hive items of the last compiles (:mod:`.classes`), taken over
    where a class's grants there and the database's tables stand, and kept.
    ``members_moved``: the users whose roles or groups the changes since the last compile
    can have moved (``None``: unknown, every model role's holders are asked again); only a
    hint: what it misses is caught by comparing the model's memberships (:class:`_Seen`)."""
    roots = [
        ObjectRef(T.CATALOG, (c,)) for c in sorted(catalogs) if ObjectRef(T.CATALOG, (c,)) in model.objects
    ]
    who = principals(model, naming) if who is None else who
    notes: list[str] = list(who.notes)
    items = Items()
    fast: list[str] | None = None
    if roots and kept is not None and focus is not None and len(focus) == 1 and not mirrored:
        # a focus of one database whose tables' grants alone moved: those tables alone
        hive = hive_catalog(model, catalogs) if hive == _UNKNOWN else hive
        fast = _tables_only(items, model, roots, focus, hive, naming, deny_enabled, who, kept, locations)
    if fast is not None:
        notes += fast
    elif roots:
        focus = None if focus is None else with_case_twins(model, roots, focus)
        # with a focus, the topics and filesets held are found as the inventory is made
        held: frozenset[ObjectRef] | None = None
        if focus is None:
            inventory = held_objects(model, roots, focus)
        else:
            inventory, held = held_in_focus(model, roots, focus)
        hive = hive_catalog(model, catalogs) if hive == _UNKNOWN else hive
        for schema in (ObjectRef(T.SCHEMA, (hive, d)) for d in sorted(mirrored)) if hive else ():
            if focus is None or schema in focus:
                inventory.add(schema)  # a schema alone: no topic or fileset
        leaves = {o.parent for o in held if o.parent} if held is not None else set()
        starts = roots if focus is None else sorted(focus | leaves, key=str)
        # a focused compile decides only for whom something there decides (:mod:`.deciding`)
        users: Collection[str] | None = None if focus is None else deciding_users(model, starts)
        deny = deny_enabled.get(naming.hive_service, False)
        classes = None
        hive_root = ObjectRef(T.CATALOG, (hive,)) if hive is not None else None
        if kept is not None and hive_root in roots:
            assert hive_root is not None
            classes = HiveClasses(kept, model, inventory, hive_root, focus, naming.hive_service, deny)
            if users is not None and not leaves:
                # no topic or fileset: only the Hive items need the classes, and those of the
                # users whose items are kept are taken over without compiling them
                users = classes.split(users, who.refused_users, starts)
        compiled = None
        if users is None or users:  # nobody: no class, nothing to compile
            compiled = EntitlementCompiler(model, OPERATIONS).compile(inventory, users, starts)
        by_root: dict[ObjectRef, list[Group]] = {}
        for root in roots:
            catalog = root.names[0]
            groups = [] if compiled is None else list(_groups(compiled, catalog, who.refused_users))
            by_root[root] = groups
            if catalog == hive:
                notes += hive_items(
                    items, groups, root, inventory, model, naming.hive_service, deny, focus, classes
                )
            elif any(o.type is T.TABLE for o in inventory.within(root)):
                notes.append(
                    f"catalog {catalog}: its tables would share Ranger service {naming.hive_service} "
                    f"with catalog {hive}; not pushed (narrower)"
                )
        notes += leaf_items(items, by_root, inventory, model, naming, deny_enabled, locations or {}, held)
        if classes is not None and focus is None:
            # each database's split kept for the first change focused on it
            classes.seed(inventory, who.refused_users)
        if classes is not None and kept is not None and not mirrored:
            _keep_items(kept, items, model, classes, who)
    with _MEMO_LOCK:  # one compile at a time moves the kept roles (compiles may share a model)
        # the model roles' holders as the kept roles hold them (made again where they moved)
        # answer the policies' choice of roles too: none is asked of the model again
        memo = _memo(model, naming, who)
        memo.kept(model, naming, who, members_moved)
        policies: set[Fact] = set(_policies(items, model, naming, who, memo))
        kept_roles, user_roles = _roles(model, naming, policies, named_elsewhere, who, members_moved, memo)
    # the model roles' Ranger roles join as the set kept between compiles (a union of two
    # sets in C, by the hashes they hold): none is hashed, built or compared again here
    facts = joined(kept_roles, frozenset([*policies, *user_roles]))  # remembered by its parts
    if not deny_enabled.get(naming.hive_service, False) and roots:
        notes.append(
            f"service {naming.hive_service}: its definition does not enable deny items "
            "(options.enableDenyAndExceptionsInPolicies); DENY and other exceptions are expressed "
            "with per-table allow items instead of a wildcard and deny items"
        )
    return Desired(facts, tuple(sorted(set(notes))))


_UNKNOWN = "\x00unknown"
_LEAVES = (T.TOPIC, T.FILESET)


def _keep_items(kept: KeptClasses, items: Items, model: Model, classes: HiveClasses, who: Principals) -> None:
    """Each database the compile made the Hive items of, its items kept with what they
    were made from (:class:`~.classes.KeptItems`): a later compile of that database alone
    whose tables' grants alone moved decides again only those tables (:func:`_tables_only`)."""
    service, deny = classes.service, classes.deny
    by_name = {schema.names[1]: schema for schema in classes.databases if schema in model.objects}
    found: dict[str, DatabaseItems] = {name: {} for name in by_name}
    for denied, table in ((False, items.allow), (True, items.deny)):
        for key, by_access in table.items():
            if key[0] != service:
                continue
            mine = found.get(next((v[0] for k, v, _ in key[1] if k == "database"), ""))
            if mine is not None:
                entry = mine.setdefault(key, ({}, {}))
                entry[1 if denied else 0].update((a, frozenset(u)) for a, u in by_access.items() if u)
    above: dict[ObjectRef, Held] = {}
    refused = (who.refused_users, who.refused_roles)
    for name, schema in by_name.items():
        names = classes.databases[schema].names
        made = KeptItems.of(model, schema, names, found[name], refused, above)
        kept.outputs[(schema, service, deny)] = made


# the checks of :func:`_tables_only` beyond :meth:`KeptItems.moved`, one function each


def _twinless(model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef]) -> bool:
    """No schema equal to the focus's but for case (a focused compile would hold it too)."""
    return with_case_twins(model, roots, focus) == focus


def _plainly_named(schema: ObjectRef) -> bool:
    """The database's name one Ranger and Hive take as it is: exact and lower-case. The
    refusals of :func:`~.hive_names.unnamable_schemas` look at the whole model (a capitalised
    database is refused once any grant or owner sits on or in it: a first grant on one of
    its tables refuses it all), which the kept items do not follow: such a database is
    compiled. A schema equal to another but for case is :func:`_twinless`'s."""
    name = schema.names[1]
    return exact(name) and name == name.lower()


def _leafless(model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef]) -> bool:
    """No topic or fileset a focused compile holds (:func:`held_in_focus`): registered or
    named in the database, in a schema registering one, or named anywhere below the roots
    (those are compiled every time, by a compile deciding for their users too)."""
    (schema,) = focus
    if model.leaves.get(schema) or any(o.type in _LEAVES for o in model.marked_within(schema)):
        return False
    if leaf_schemas(model, roots) - focus:
        return False
    return not any(model.marked_leaves.get(r.names[0]) for r in roots)


def _plain(model: Model, users: Iterable[str]) -> bool:
    """No user decided again owns anything or is a service admin (decided by a personal
    view or as an admin: the compile of the database decides them)."""
    return not any(model.owned_by.get(u) or u in model.service_admins for u in users)


def _without(
    entry: tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]], users: AbstractSet[str]
) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """A resource's kept items without ``users`` (accesses left to nobody dropped)."""
    allow, deny = entry
    return (
        {a: u - users for a, u in allow.items() if not u <= users},
        {a: u - users for a, u in deny.items() if not u <= users},
    )


def _database_items(
    model: Model,
    roots: list[ObjectRef],
    schema: ObjectRef,
    hive: str,
    service: str,
    users: frozenset[str],
    refused: frozenset[str],
) -> list[tuple[bool, str, tuple[Resource, ...], str, frozenset[str]]] | None:
    """What the compile of the database alone (deny items enabled, no topic or fileset
    held: its inventory the catalogs, the database, its registered children and every
    object marked in it) gives ``users`` there: :func:`~.hive.hive_items` of them
    (``None``: not proved, a user decided by a personal view)."""
    if not users:
        return []
    inventory = Inventory.of(roots)
    inventory.add(schema)
    inventory.add_children(schema, set(model.children(schema)))
    for obj in model.marked_within(schema):
        inventory.add(obj)
    compiled = EntitlementCompiler(model, OPERATIONS).compile(inventory, users, [schema])
    groups = list(_groups(compiled, hive, refused))
    if any(isinstance(view, OwnerView) for _, view in groups):
        return None
    made, d = Items(), schema.names[1]
    root = ObjectRef(T.CATALOG, (hive,))
    hive_items(made, groups, root, inventory, model, service, True, frozenset({schema}))
    out: list[tuple[bool, str, tuple[Resource, ...], str, frozenset[str]]] = []
    for denied, table in ((False, made.allow), (True, made.deny)):
        for (svc, res), by_access in table.items():
            if svc != service or next((v[0] for k, v, _ in res if k == "database"), None) != d:
                return None  # not of this database: not proved (hive_items keeps to it)
            out.extend((denied, svc, res, access, frozenset(who)) for access, who in by_access.items() if who)
    return out


def _tables_only(
    items: Items,
    model: Model,
    roots: list[ObjectRef],
    focus: frozenset[ObjectRef],
    hive: str | None,
    naming: RangerNaming,
    deny_enabled: Mapping[str, bool],
    who: Principals,
    kept: KeptClasses,
    locations: Mapping[str, tuple[str, ...]] | None,
) -> list[str] | None:
    """The compile of a focus of one Hive database whose tables' grants alone moved since
    its last compile (issue 30), into ``items``; its notes (``None``: not proved, the
    database is compiled). Its items are the last compile's (:class:`~.classes.KeptItems`),
    but on the resources of the tables whose grants moved, where the holders of the roles
    whose grants there moved are decided again (over an inventory of those tables alone:
    :func:`~.hive.table_items`) and everyone else keeps their items: a grant on a table
    decides for its role's holders, on that table alone (a class's every-table and
    database items come from its coverage's default and its owners; its other tables'
    items from its decisions on them).

    Proved, else ``None``: deny items enabled; the database in the Hive catalog, registered,
    its name exact and lower-case (:func:`_plainly_named`: no whole-model naming refusal of
    :func:`~.hive_names.unnamable_schemas` can move), its case twins none
    (:func:`with_case_twins`), no topic or fileset held by the focused compile; the kept
    items' proof (:meth:`KeptItems.moved`: same model object, nobody's roles moved, the
    same service admins and refused principals, the database's children, marked objects
    and path as they were, the moved objects registered tables named alone, no DENY there
    or above); no decided user owning anything or a service admin."""
    service = naming.hive_service
    (schema,) = focus
    if hive is None or not deny_enabled.get(service, False) or schema.type is not T.SCHEMA:
        return None
    root = ObjectRef(T.CATALOG, (hive,))
    if schema.names[0] != hive or root not in roots or schema not in model.objects:
        return None
    last = kept.outputs.get((schema, service, True))
    refused = (who.refused_users, who.refused_roles)
    found = None if last is None else last.moved(model, schema, refused)
    if last is None or found is None:
        return None
    moved, stamped = found
    if not _plainly_named(schema) or not _twinless(model, roots, focus):
        return None
    if not _leafless(model, roots, focus):
        return None
    # the users whose roles were stamped since: decided again over the whole database (as
    # its compile decides them: those something there decides for), the others of them
    # (removed, or deciding nothing there any more) left with nothing there
    whole = decides_for(model, focus, (u for u in stamped if u in model.users)) - who.refused_users
    roles = set().union(*moved.values())
    users = {u for r in roles for u in model.holders_of(r) if u in model.users} - who.refused_users - whole
    if not _plain(model, users | whole):
        return None
    inventory = Inventory.of(roots)
    for table in moved:
        inventory.add(table)
    groups: list[Group] = []
    if users:
        compiled = EntitlementCompiler(model, OPERATIONS).compile(inventory, users, [schema])
        groups = list(_groups(compiled, hive, who.refused_users))
    made = table_items(groups, schema, inventory, model, service, last.names, moved)
    if made is None:
        return None
    record = made[0]
    again = _database_items(model, roots, schema, hive, service, whole, who.refused_users)
    if again is None:
        return None
    kept.focused += 1
    kept.compiled += made[1]
    kept.redecided += len(users) + len(whole)
    kept.redecided_whole += len(whole)
    d = schema.names[1]
    gone = stamped | users
    now = dict(last.items)
    if stamped:
        # the stamped users' items made again, on every resource of the database
        now = {key: _without(entry, stamped) for key, entry in now.items()}
    for table in moved:
        key = (service, hive_table(d, last.names.resource[table]))
        now[key] = _without(now.get(key, ({}, {})), gone)
    for denied, _, res, access, who_ in (*record.added, *again):
        entry = now.get((service, res), ({}, {}))
        side = dict(entry[1 if denied else 0])
        side[access] = side.get(access, frozenset()) | who_
        now[(service, res)] = (entry[0], side) if denied else (side, entry[1])
    now = {key: entry for key, entry in now.items() if entry[0] or entry[1]}
    for key, (allow, deny) in now.items():
        if allow:
            items.allow[key] = {a: set(u) for a, u in allow.items()}
        if deny:
            items.deny[key] = {a: set(u) for a, u in deny.items()}
    kept.outputs[(schema, service, True)] = last.moved_on(model, schema, now, moved)
    notes = list(last.notes)  # the database's names' (its shape stood)
    none: list[Group] = []
    by_root = dict.fromkeys(roots, none)
    notes += leaf_items(items, by_root, inventory, model, naming, deny_enabled, locations or {}, frozenset())
    return notes


def _groups(ent: Entitlements, catalog: str, refused: frozenset[str]) -> Iterable[Group]:
    """Users deciding alike in ``catalog``: a class without its owners, and each owner
    (users Ranger cannot name are left out)."""
    owners = ent.owners.get(catalog, {})
    for users, view in ent.classes.get(catalog, []):
        plain = frozenset(u for u in users if u not in owners and u not in refused)
        if plain:
            yield plain, view
    for user, owner_view in sorted(owners.items()):
        if user not in refused:
            yield frozenset({user}), owner_view


def _policies(
    items: Items, model: Model, naming: RangerNaming, who: Principals, memo: _Memo | None = None
) -> Iterable[PolicyFact]:
    """``memo``: the kept roles, made current for this compile (:meth:`_Memo.kept`): their
    holders are taken from it."""
    holders = _Holders(model, who, memo)
    # within one compile, or kept with the memo while nobody's roles moved (:meth:`_Memo.kept`)
    covers: dict[frozenset[str], Cover] = {} if memo is None else memo.covers
    named: dict[tuple[frozenset[str], str], Named] = {} if memo is None else memo.named
    index = None if memo is None else memo.covering
    if memo is not None and (len(covers) > _COVERS_KEPT or len(named) > _NAMED_KEPT):
        memo.drop_choices()
        covers, named, index = memo.covers, memo.named, memo.covering
    roles = _RolesOf(model)
    for key in sorted(set(items.allow) | set(items.deny), key=str):
        allow = _pairs(items.allow.get(key, {}), roles, holders, naming, covers, named, index)
        deny = _pairs(items.deny.get(key, {}), roles, holders, naming, covers, named, index)
        if allow or deny:
            yield PolicyFact(key[0], key[1], allow, deny)


class _Holders(dict[str, frozenset[str]]):
    """A role's holders Ranger may name (none for a refused role), found when first asked."""

    def __init__(self, model: Model, who: Principals, memo: _Memo | None = None) -> None:
        super().__init__()
        self.model, self.who, self.memo = model, who, memo

    def __missing__(self, role: str) -> frozenset[str]:
        if role in self.who.refused_roles:
            found: frozenset[str] = frozenset()
        elif self.memo is not None and role in self.memo.facts:
            # a model role not refused, made from the model's holders now (:meth:`_Memo.kept`)
            found = self.memo.made[role][0]
        else:
            found = self.who.holders(self.model, role)
        self[role] = found
        return found

    def get(self, role: str, default: object = None) -> frozenset[str]:
        return self[role]


class _RolesOf(dict[str, frozenset[str]]):
    """Each user's roles in the model, found when first asked (once a compile)."""

    def __init__(self, model: Model) -> None:
        super().__init__()
        self.model = model

    def __missing__(self, user: str) -> frozenset[str]:
        found = self[user] = frozenset(self.model.roles_of(user))
        return found


def _pairs(
    by_access: dict[str, set[str]],
    roles: _RolesOf,
    holders: dict[str, frozenset[str]],
    naming: RangerNaming,
    covers: dict[frozenset[str], Cover],
    named: dict[tuple[frozenset[str], str], Named] | None = None,
    index: dict[str, set[frozenset[str]]] | None = None,
) -> frozenset[Pair]:
    """Each access's users as Ranger roles: a model role whose holders all belong (the
    largest first; among equals, by name: the choice depends on the holders alone, so a
    change elsewhere in the model never moves it in a database a scoped sync leaves), and
    a per-user role for anybody left. ``covers``: the answer per users, within one compile
    (many items name the same users). ``named``: the pairs per users and access, kept with
    ``covers`` (the names are those of the same memo's naming and principals): an item
    whose users stand (a database's, naming hundreds of roles) is not named again; kept
    with the choice they were named from, taken only while ``covers`` holds that very one.
    ``index``: each user -> the sets of users holding it a choice is kept for (kept with
    ``covers``: what a move of memberships drops, :meth:`_Memo.drop_choices`)."""
    out: set[Pair] = set()
    for access, users in by_access.items():
        key = frozenset(users)
        found = None if named is None else named.get((key, access))
        hit = found[1] if found is not None and covers.get(key) is found[0] else None
        if hit is None:
            cover = covers.get(key)
            if cover is None:
                cover = covers[key] = _cover(key, roles, holders)
                if index is not None:
                    for user in key:
                        index.setdefault(user, set()).add(key)
            hit = frozenset(
                [
                    *((naming.role(role), access) for role in cover[0]),
                    *((naming.user_role(u), access) for u in cover[1]),
                ]
            )
            if named is not None:
                named[(key, access)] = (cover, hit)
        if len(by_access) == 1:
            return hit
        out |= hit
    return frozenset(out)


#: the model roles covering a set of users, and the users left (:func:`_cover`)
Cover = tuple[list[str], frozenset[str]]
#: the Ranger pairs of a choice for one access, with the choice they were named from
Named = tuple[Cover, frozenset[Pair]]
#: a memo's choices handed to the next (:attr:`_Memo.handed`): the choices, their index by
#: user, the role holders they were made from, and the index's stale entries and bound
#: (:attr:`_Memo.stale`, :attr:`_Memo.stale_limit`)
Handed = tuple[
    dict[frozenset[str], Cover], dict[str, set[frozenset[str]]], dict[str, frozenset[str]], int, int
]


def _cover(users: frozenset[str], roles: _RolesOf, holders: dict[str, frozenset[str]]) -> Cover:
    """The model roles covering ``users`` (see :func:`_pairs`), and the users left."""
    candidates = set().union(*(roles[u] for u in users))
    fitting = sorted(
        (r for r in candidates if holders.get(r) and holders[r] <= users),
        key=lambda r: (-len(holders[r]), r),
    )
    covered: set[str] = set()
    chosen: list[str] = []
    for role in fitting:  # the largest first; a role adding nobody new is left out
        if not holders[role] <= covered:
            covered |= holders[role]
            chosen.append(role)
    return chosen, users - covered


def _roles(
    model: Model,
    naming: RangerNaming,
    facts: set[Fact],
    elsewhere: frozenset[str],
    who: Principals,
    moved: frozenset[str] | None = None,
    memo: _Memo | None = None,
) -> tuple[AbstractSet[Fact], list[RoleFact]]:
    """Each model role's Ranger role, its members the model's holders (groups expanded:
    see :mod:`pushdown_ranger.compile.principals`), as a set kept between compiles; and the
    per-user roles the policies name. Only the roles whose holders ``moved`` can have
    changed are asked again (:meth:`_Memo.kept`), and the kept set moved by those
    (:meth:`_Memo.roles`). ``memo``: made current for this compile already, by a caller
    holding the lock."""
    if memo is None:
        with _MEMO_LOCK:  # one compile at a time moves the kept roles (compiles may share a model)
            memo = _memo(model, naming, who)
            memo.kept(model, naming, who, moved)
            kept = memo.roles()
    else:
        kept = memo.roles()
    out: list[RoleFact] = []
    named = elsewhere | {r for f in facts if isinstance(f, PolicyFact) for r, _ in f.allow | f.deny}
    if memo.user_roles is None:
        by_name: dict[str, list[str]] = {}
        for user in who.users(model.users):
            by_name.setdefault(naming.user_role(user), []).append(user)
        memo.user_roles = by_name
    for name in named & memo.user_roles.keys():
        for user in memo.user_roles[name]:
            out.append(RoleFact(name, frozenset({naming.user(user)})))
    return kept, out


def kept_roles() -> AbstractSet[Fact]:
    """The model roles' Ranger roles the last compile made or kept (every one a
    :class:`RoleFact`): a pass over a compile's facts for its policies may leave them out
    with one set difference in C, instead of looking at each."""
    with _MEMO_LOCK:
        return _MEMO[0].frozen if _MEMO and _MEMO[0].frozen is not None else frozenset()


def seen_memberships(model: Model) -> _Seen | None:
    """The memberships the kept roles were last made from, when kept for ``model`` (the
    last compile's, or ``None``)."""
    with _MEMO_LOCK:
        memo = _MEMO[0] if _MEMO else None
        return memo.seen if memo is not None and memo.key[1] is model else None


@dataclass
class _Seen:
    """A copy of the model's memberships (role -> users, role -> groups, group -> users)
    the memo's roles were made from, and each user's groups then: equal to the model's
    again (one comparison of dicts) only when every holder is as the memo has it."""

    role_users: dict[str, frozenset[str]]
    role_groups: dict[str, frozenset[str]]
    groups: dict[str, frozenset[str]]
    user_groups: dict[str, frozenset[str]]
    #: the model's count of role stamps (:attr:`Model.roles_stamped`) and its latest stamp
    #: when this copy was last made equal to it; ``stamped`` ``None``: a user or holder had no
    #: stamp then (a model filled without events), the stamps prove nothing
    stamped: int | None = None
    latest: int = 0

    @classmethod
    def of(cls, model: Model) -> _Seen:
        seen = cls(
            {r: frozenset(u) for r, u in model.role_users.items()},
            {r: frozenset(g) for r, g in model.role_groups.items()},
            {g: frozenset(u) for g, u in model.groups.items()},
            {u: frozenset(g) for u, g in model.user_groups.items() if g},
        )
        seen.restamp(model)
        return seen

    def restamp(self, model: Model) -> None:
        """The model's stamps taken as this copy's, when it equals the model's memberships
        (a pass over every user: with a full copy or a full comparison only)."""
        stamps = model.roles_moved
        named = set(model.users).union(*model.role_users.values(), *model.groups.values())
        if all(u in stamps for u in named):
            self.stamped, self.latest = model.roles_stamped, max(stamps.values(), default=0)
        else:
            self.stamped = None

    def stamped_only(self, model: Model, users: Iterable[str]) -> bool:
        """Whether every role stamp the model gave since this copy was last made equal to it
        went to ``users`` (issue 30: proved from a few stamps, not by comparing every
        role's holders): each of them whose stamp is newer than :attr:`latest` was stamped
        since at least once, so when the count moved by as many, nobody else was. A change
        of any user's roles (a role granted or revoked to it or its groups, a group joined or
        left or removed, a role it holds deleted, the user added or removed) stamps it
        (:attr:`Model.roles_moved`); what no stamp follows changes no role's holders (a role
        granted to a group without members, a role without holders deleted)."""
        if self.stamped is None:
            return False
        since = [u for u in set(users) if model.roles_moved.get(u, 0) > self.latest]
        return model.roles_stamped - self.stamped == len(since)

    def settle(self, model: Model, users: Iterable[str]) -> None:
        """After :meth:`stamped_only` held for ``users`` and their entries were copied again
        (:meth:`moved`): the model's count and the latest of their stamps taken."""
        stamps = [model.roles_moved.get(u, 0) for u in users]
        self.stamped, self.latest = model.roles_stamped, max([self.latest, *stamps])

    def same(self, model: Model) -> bool:
        return (
            self.role_users == model.role_users
            and self.role_groups == model.role_groups
            and self.groups == model.groups
        )

    def joined_only(self, model: Model, role: str, user: str) -> bool:
        """Whether the model's direct memberships are this copy's with ``user`` holding
        ``role`` too (and ``user`` holds ``role`` directly now, as the caller found, and was
        not in it here): by the stamps when they prove that ``user`` alone was stamped, once,
        since this copy was made equal to the model (the one stamp of its grant: a grant,
        revoke or removal moves one membership of one user, so nobody else's and no other of
        its own moved); else by comparing every role's holders."""
        if self.stamped is not None and model.roles_stamped - self.stamped == 1:
            if self.stamped_only(model, (user,)):
                return True
        return self.equal_but(model, role, user)

    def equal_but(self, model: Model, role: str, user: str) -> bool:
        """:meth:`joined_only` by comparing every role's direct holders."""
        return {**self.role_users, role: self.role_users.get(role, frozenset()) | {user}} == model.role_users

    def moved(self, model: Model, users: frozenset[str], held: Mapping[str, set[str]]) -> set[str]:
        """The entries ``users``' changes can have moved copied again from the model; the
        roles whose holders can have changed returned: each user's roles now, and those
        it held (``held``: user -> roles, of the memo)."""
        roles: set[str] = set()
        groups: set[str] = set()
        for user in users:
            roles.update(model.roles_of(user))
            roles.update(held.get(user, ()))
            groups.update(model.user_groups.get(user, ()))
            groups.update(self.user_groups.get(user, ()))
            now = model.user_groups.get(user)
            _mirror(self.user_groups, user, now if now else None)
        for role in roles:
            _mirror(self.role_users, role, model.role_users.get(role))
            _mirror(self.role_groups, role, model.role_groups.get(role))
        for group in groups:
            if _mirror(self.groups, group, model.groups.get(group)):
                # its roles' holders moved (those it held before and not now are
                # mirrored above, or the copy differs from the model and all is made again)
                roles.update(model.group_roles.get(group, ()))
        return roles


def _mirror(copy: dict[str, frozenset[str]], key: str, now: set[str] | None) -> bool:
    """``copy[key]`` made ``now`` (``None``: absent); whether it differed."""
    before = copy.get(key)
    if now is None:
        copy.pop(key, None)
        return before is not None
    copy[key] = frozenset(now)
    return before != copy[key]


@dataclass
class _Memo:
    """What :func:`_roles` made for one :class:`Principals` answer (the kept identity, the
    model's users and roles: :func:`pushdown_ranger.compile._principals`) and naming:
    each model role's holders and its Ranger role (made again when the holders differ),
    the memberships they were made from, and the per-user roles' names."""

    key: tuple[object, ...]
    made: dict[str, tuple[frozenset[str], RoleFact]] = field(default_factory=dict)
    user_roles: dict[str, list[str]] | None = None
    #: each model role's Ranger role, as made from ``seen``
    facts: dict[str, RoleFact] = field(default_factory=dict)
    #: user -> the roles it holds (refused or not) in ``seen``, and role -> its holders
    held: dict[str, set[str]] = field(default_factory=dict)
    raw: dict[str, frozenset[str]] = field(default_factory=dict)
    seen: _Seen | None = None
    #: ``set(facts.values())``, kept (``None``: to be made), and the facts that left and
    #: joined :attr:`facts` since it was made (:meth:`roles` moves it by them)
    frozen: frozenset[Fact] | Spread | None = None
    gone: list[RoleFact] = field(default_factory=list)
    joined: list[RoleFact] = field(default_factory=list)
    #: the policies' choice of Ranger roles per set of users (:func:`_cover`), kept between
    #: compiles only while the stamps prove that nobody's roles moved (:meth:`kept`)
    covers: dict[frozenset[str], Cover] = field(default_factory=dict)
    #: the Ranger pairs of each choice per access (:func:`_pairs`), kept and dropped with
    #: :attr:`covers` (a function of the choice, and of this memo's naming and principals)
    named: dict[tuple[frozenset[str], str], Named] = field(default_factory=dict)
    #: each user -> the sets of users in :attr:`covers` holding it (what a move drops); it may
    #: also name sets no longer in :attr:`covers` (dropped through another of their users:
    #: left in place, not looked for), as many as :attr:`stale` at most
    covering: dict[str, set[frozenset[str]]] = field(default_factory=dict)
    #: the entries of :attr:`covering` naming a set no longer in :attr:`covers` (at most;
    #: counted when dropped), and the count beyond which the index is made again from
    #: :attr:`covers` (:meth:`_reindex`: never below :data:`_STALE_KEPT`, nor below the
    #: entries the last one made, so it costs as much as the drops that called for it)
    stale: int = 0
    stale_limit: int = 0
    #: the choices of the memo this one replaced (of the same model, naming and refused
    #: principals: a user or role added or removed), with the role holders they were made
    #: from: taken over by the first :meth:`kept`, moved by the holders that differ
    handed: Handed | None = None

    def drop_choices(self, users: Iterable[str] | None = None) -> None:
        """The kept choices of Ranger roles (:attr:`covers`, :attr:`named`) dropped: of the
        sets of users holding one of ``users``, or every one (``None``). A choice for a set of
        users is a function of its users' roles, those roles' holders and the refused
        principals (this memo's own): when memberships move, it can change only where one of
        its users is a user whose roles moved or a holder, before or after, of a role whose
        holders moved; every such user is in ``users`` (:meth:`kept`).

        A visit of ``users``' entries in :attr:`covering` and of the sets they name, not of
        those sets' other users (issue 30: the every-table policy's set names each user
        deciding in its database, hundreds at the issue's estate): their entries naming a
        dropped set are left in place (:attr:`stale`). Dropping a set no longer kept does
        nothing, and a set chosen again is indexed again under each of its users, so each set
        in :attr:`covers` stays named by every one of its users, which is all a drop needs."""
        if users is None:
            self.covers, self.named, self.covering, self.stale = {}, {}, {}, 0
            return
        gone: set[frozenset[str]] = set()
        for user in users:
            gone |= self.covering.pop(user, set())
        for key in gone:
            if self.covers.pop(key, None) is not None:
                self.stale += len(key)
        if self.stale > max(_STALE_KEPT, self.stale_limit):
            self._reindex()
        # the pairs named from a dropped choice are no longer taken (:func:`_pairs`)

    def _reindex(self) -> None:
        """:attr:`covering` made again from :attr:`covers` alone (its stale entries gone)."""
        covering: dict[str, set[frozenset[str]]] = {}
        entries = 0
        for key in self.covers:
            entries += len(key)
            for user in key:
                covering.setdefault(user, set()).add(key)
        self.covering, self.stale, self.stale_limit = covering, 0, entries

    def roles(self) -> frozenset[Fact] | Spread:
        """``frozenset(facts.values())``: the kept set moved by the facts that left and
        joined (two set operations in C, by the hashes the set holds; spread from
        :data:`~pushdown_ranger.factsets.SPREAD_FROM` roles, the small sets those lie in
        copied), remembered so (:func:`~pushdown_ranger.factsets.kept_moved`); made from every
        fact only when nothing is kept, or when two roles' facts are equal (the count
        tells: then the set is smaller than :attr:`facts`, and a move could drop one)."""
        frozen = self.frozen
        if frozen is not None and (self.gone or self.joined):
            base, gone, joined = frozen, frozenset(self.gone), frozenset(self.joined)
            # spread (one per model role, ~10,000 at issue 30's estate): moved by copying the
            # small sets those roles lie in, not every role; remembered by what differs
            moved = base.moved(gone, joined) if isinstance(base, Spread) else (base - gone) | joined
            frozen = kept_moved(moved, base, gone, joined)
        if frozen is None or len(frozen) != len(self.facts):
            whole = frozenset(self.facts.values())
            frozen = Spread.of(whole) if len(whole) >= factsets.SPREAD_FROM else whole
        self.frozen, self.gone, self.joined = frozen, [], []
        return frozen

    def kept(
        self, model: Model, naming: RangerNaming, who: Principals, moved: frozenset[str] | None
    ) -> dict[str, RoleFact]:
        """Each model role's Ranger role: those of the roles ``moved`` users hold or held
        asked again; every one when ``moved`` is ``None``, when nothing was seen yet, or
        when the model's memberships still differ from those seen after that (a change
        the hint did not name: a group removed with its members, say)."""
        seen = self.seen
        if moved is not None and seen is not None and seen.stamped_only(model, ()):
            # nobody stamped since the copy was made equal to the model: no user's roles and
            # no role's holders moved, so the kept roles stand, and so does each kept choice
            # of Ranger roles (:func:`_cover`: a function of its users' roles, those roles'
            # holders and the refused principals, which are this memo's own)
            return self.facts
        if moved is not None and seen is not None:
            # only the users of the hint stamped: their roles' holders alone can have moved
            # (the stamps prove it without a pass over every role); else every role's
            # holders compared, as the model's memberships now
            proved = seen.stamped_only(model, moved)
            if not proved and seen.same(model):
                self.drop_choices()  # made again: not proved which moved and moved back
                seen.restamp(model)
                return self.facts
            roles: set[str] | None = seen.moved(model, moved, self.held)
            if proved:
                seen.settle(model, moved)
            elif seen.same(model):
                seen.restamp(model)
            else:
                roles = None  # a change the hint did not name: every role made again
            if roles is not None:
                # the choices of the sets holding a user whose roles moved, or a holder
                # (before or after) of a role whose holders moved, made again; the others
                # stand (a function of their users' roles and those roles' holders alone)
                touched = set(moved)
                for role in roles:
                    touched |= self.raw.get(role, frozenset())
                    self._make(model, naming, who, role)
                    touched |= self.raw.get(role, frozenset())
                self.drop_choices(touched)
                return self.facts
        # anything else: the choices are made again (a role's holders may have moved, one
        # fitting a set of users it fitted not, or the reverse)
        self.drop_choices()
        handed, self.handed = self.handed, None
        self.facts, self.held, self.raw, self.seen = {}, {}, {}, _Seen.of(model)
        self.frozen, self.gone, self.joined = None, [], []
        for role in model.roles:
            self._make(model, naming, who, role)
        if handed is not None:
            # the last memo's choices (a user or role came or went): those of the sets
            # holding a holder, then or now, of a role whose holders differ are dropped
            # (a user whose roles differ is one of them); a pass over every role, as the
            # one above that made them all
            covers, covering, raw, self.stale, self.stale_limit = handed
            differ: set[str] = set()
            for role in raw.keys() | self.raw.keys():
                then, now = raw.get(role, frozenset()), self.raw.get(role, frozenset())
                if then != now:
                    differ |= then | now
            self.covers, self.covering = covers, covering
            self.drop_choices(differ)
        return self.facts

    def _make(self, model: Model, naming: RangerNaming, who: Principals, role: str) -> None:
        """``role``'s Ranger role made (or taken from :attr:`made`), as the model holds it now."""
        raw = frozenset(model.holders_of(role)) if role in model.roles else frozenset()
        for user in self.raw.get(role, frozenset()) - raw:
            self.held[user].discard(role)
        for user in raw:
            self.held.setdefault(user, set()).add(role)
        self.raw[role] = raw
        old = self.facts.pop(role, None)
        if old is not None:
            self.gone.append(old)
        if role not in model.roles or role in who.refused_roles:
            return
        holders = raw - who.refused_users
        hit = self.made.get(role)
        if hit is None or hit[0] != holders:
            fact = interned(RoleFact(naming.role(role), frozenset(naming.user(u) for u in holders)))
            hit = self.made[role] = (holders, fact)
        self.facts[role] = hit[1]
        self.joined.append(hit[1])


#: the kept choices of Ranger roles (:attr:`_Memo.covers`) beyond which they are dropped
_COVERS_KEPT = 20_000
#: the kept pairs of those choices (:attr:`_Memo.named`) beyond which they are dropped
_NAMED_KEPT = 4_096
#: the stale entries of the kept choices' index (:attr:`_Memo.stale`) beyond which it is
#: made again, at the least
_STALE_KEPT = 65_536

#: the one memo kept (its key holds the Principals answer alive, so no other reuses its id)
_MEMO: list[_Memo] = []
_MEMO_LOCK = threading.Lock()


def _memo(model: Model, naming: RangerNaming, who: Principals) -> _Memo:
    """The memo of ``who`` over ``model``: kept only while ``who`` is the answer kept for a
    kept identity (the same object: the identity, the users and the roles stood); a
    ``who`` computed afresh is a new object, so nothing is reused."""
    key = (who, model, naming.role_prefix, naming.user_role_prefix)
    if not _MEMO or _MEMO[0].key[0] is not who or _MEMO[0].key[1] is not model or _MEMO[0].key[2:] != key[2:]:
        memo, old = _Memo(key), _MEMO[0] if _MEMO else None
        if old is not None and old.seen is not None and old.key[1] is model and old.key[2:] == key[2:]:
            was: Principals = old.key[0]  # type: ignore[assignment]
            if (was.refused_users, was.refused_roles) == (who.refused_users, who.refused_roles):
                # a user or role added or removed, nobody refused otherwise: the choices of
                # Ranger roles handed over, moved by the holders that differ (:meth:`_Memo.kept`)
                memo.handed = (old.covers, old.covering, old.raw, old.stale, old.stale_limit)
                old.covers, old.named, old.covering, old.stale = {}, {}, {}, 0
        _MEMO[:] = [memo]
    return _MEMO[0]
