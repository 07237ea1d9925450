"""Two or more enforced catalogs with tables on one Ranger backend: one Hive service. Pure.

Ranger cannot tell through which catalog a request on a Hive database comes, so (as the
MySQL and Hive backends do) each Hive policy holds only what every catalog decides: each
catalog is compiled as the one holding the Hive service, then, per resource set,

- an allow pair stays only where every member of its role is allowed that access by every
  catalog holding the database (narrower where they differ; a note says so);
- every deny pair of every catalog is kept: a DENY is never dropped.

A database one catalog registers is, through every other sharing catalog, a schema nobody
registered there (the metastore is one): each catalog is compiled with the others'
databases too (:func:`mirrored`), and its deny items there are kept (a catalog-wide DENY
reaches them) while its allow items there decide nothing (only the catalogs holding a
database decide its allows, as before).

Topics and filesets are compiled over every catalog at once already: taken from the first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.plan import Fact
from pushdown_ranger.compile.objects import holds_tables, named_objects
from pushdown_ranger.facts import Pair, PolicyFact, Resource, RoleFact

T = SecurableType


def table_catalogs(model: Model, catalogs: Iterable[str]) -> list[str]:
    """The enforced catalogs holding tables (registered, or named by a grant), by name."""
    return [
        c for c in sorted(catalogs) if ObjectRef(T.CATALOG, (c,)) in model.objects and holds_tables(model, c)
    ]


def _held(model: Model, catalog: str) -> dict[str, str]:
    """The Hive databases ``catalog`` holds (case-folded -> a name the model gives it):
    its registered schemas, and those its grants and owners name."""
    root = ObjectRef(T.CATALOG, (catalog,))
    names = [o.names[1] for o in model.children(root) if o.type is T.SCHEMA]
    names += [o.names[1] for o in named_objects(model, [catalog])]
    return {n.casefold(): n for n in sorted(names, reverse=True)}


def mirrored(model: Model, sharing: Iterable[str]) -> dict[str, frozenset[str]]:
    """Per sharing catalog, the databases only the other sharing catalogs hold, by the name
    one of those gives it: the schemas a request may reach through this catalog unregistered."""
    held = {c: _held(model, c) for c in sorted(sharing)}
    every: dict[str, str] = {}
    for names in held.values():
        for folded, name in names.items():
            every.setdefault(folded, name)
    return {c: frozenset(n for f, n in every.items() if f not in held[c]) for c in held}


def same_databases(
    model: Model, catalogs: Iterable[str], focus: frozenset[ObjectRef]
) -> frozenset[ObjectRef]:
    """``focus`` (Hive schemas) with the schemas of the same Hive database (any case) in every
    catalog of ``catalogs``: a scoped sync of one catalog's database compiles every catalog's."""
    names = {s.names[1].casefold() for s in focus}
    more = {
        o
        for c in catalogs
        for o in model.within(ObjectRef(T.CATALOG, (c,)))
        if o.type is T.SCHEMA and o.names[1].casefold() in names
    }
    return focus | more


def shared_hive(
    parts: Mapping[str, Desired],
    model: Model,
    hive_service: str,
    user_role_prefix: str,
    mirrors: Mapping[str, frozenset[str]] | None = None,
) -> Desired:
    """One Desired from each catalog's (``parts``, by catalog): the Hive policies as every
    catalog decides them, the rest from the first. ``mirrors``: :func:`mirrored` (a catalog
    does not hold those databases: its allow items there decide nothing)."""
    catalogs = sorted(parts)
    first = parts[catalogs[0]]
    members = {f.name: f.users for d in parts.values() for f in d.facts if isinstance(f, RoleFact)}
    hive = {c: _hive_facts(d, hive_service) for c, d in parts.items()}
    mirrors = mirrors or {}
    holding = {
        c: _databases(model, c, hive[c]) - {d.casefold() for d in mirrors.get(c, ())} for c in catalogs
    }
    keys = {k for by_key in hive.values() for k in by_key}
    policies: list[Fact] = [f for f in first.facts if isinstance(f, PolicyFact) and f.service != hive_service]
    for key in sorted(keys, key=str):
        database = _database(key[1])
        deciding = [c for c in catalogs if database is None or database in holding[c]] or catalogs
        allow = _every(key, deciding, hive, members)
        deny = frozenset(p for c in catalogs if key in hive[c] for p in hive[c][key].deny)
        if allow or deny:
            policies.append(PolicyFact(key[0], key[1], allow, deny))
    named = {r for f in policies if isinstance(f, PolicyFact) for r, _ in f.allow | f.deny}
    roles = {f.name: f for d in parts.values() for f in d.facts if isinstance(f, RoleFact)}
    kept: list[Fact] = [f for n, f in roles.items() if n in named or not n.startswith(user_role_prefix)]
    notes = {n for d in parts.values() for n in d.notes if "would share Ranger service" not in n}
    notes.add(
        f"catalogs {', '.join(catalogs)} share Ranger service {hive_service}: each Hive policy holds "
        "only what every catalog holding its database allows, and every catalog's DENY (narrower "
        "where they differ)"
    )
    return replace(first, facts=frozenset(policies + kept), notes=tuple(sorted(notes)))


Key = tuple[str, tuple[Resource, ...]]


def _every(
    key: Key,
    deciding: Sequence[str],
    hive: Mapping[str, dict[Key, PolicyFact]],
    members: Mapping[str, frozenset[str]],
) -> frozenset[Pair]:
    """The allow pairs of ``key`` whose role's every member each deciding catalog allows."""
    candidates = {p for c in deciding if key in hive[c] for p in hive[c][key].allow}
    out = set()
    for role, access in candidates:
        who = members.get(role, frozenset())
        if all(who <= _allowed(hive[c].get(key), access, members) for c in deciding):
            out.add((role, access))
    return frozenset(out)


def _allowed(fact: PolicyFact | None, access: str, members: Mapping[str, frozenset[str]]) -> frozenset[str]:
    if fact is None:
        return frozenset()
    return frozenset(u for r, a in fact.allow if a == access for u in members.get(r, frozenset()))


def _hive_facts(desired: Desired, service: str) -> dict[Key, PolicyFact]:
    return {
        (f.service, f.resources): f
        for f in desired.facts
        if isinstance(f, PolicyFact) and f.service == service
    }


def _database(resources: tuple[Resource, ...]) -> str | None:
    return next((v[0].casefold() for k, v, _ in resources if k == "database" and len(v) == 1), None)


def _databases(model: Model, catalog: str, facts: Mapping[Key, PolicyFact]) -> set[str]:
    """The Hive databases ``catalog`` holds: its schemas, and those its policies name."""
    root = ObjectRef(T.CATALOG, (catalog,))
    out = {o.names[1].casefold() for o in model.within(root) if o.type is T.SCHEMA}
    return out | {d for key in facts if (d := _database(key[1])) is not None}
