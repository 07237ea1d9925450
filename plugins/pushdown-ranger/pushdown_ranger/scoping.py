"""Which part of Ranger a sync over a scope compiles and diffs. Pure.

A scope whose regions all have roots at or below schemas of the Hive catalog (as the
model now says) is a *focus*: those schemas' databases are compiled and diffed, the others left as they
are. Roles, topics and filesets are compiled every time (one policy per object, cheap),
so their facts are always within. Anything wider (a catalog, the metalake, a principal
on every object), or anything in another catalog (a change there may move which catalog
the Hive service holds, and every Hive policy with it), is everything.
"""

from __future__ import annotations

from collections.abc import Callable

from pushdown.model.securables import LEAF_TYPES, ObjectRef, SecurableType
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Resolved
from pushdown_ranger.facts import PolicyFact

Focus = frozenset[ObjectRef] | None
_AT_OR_BELOW_SCHEMA = frozenset(LEAF_TYPES) | {SecurableType.SCHEMA}


def focus_of(scope: Resolved, hive: str | None) -> Focus:
    """The Hive schemas ``scope`` names (a leaf counts as its schema), or ``None``."""
    out: set[ObjectRef] = set()
    for region in scope.regions:
        if region.roots is None:
            return None
        for root in region.roots:
            schema = root.ancestor(SecurableType.SCHEMA) if len(root.names) >= 2 else None
            if root.type not in _AT_OR_BELOW_SCHEMA or schema is None:
                return None
            if schema.names[0] != hive:  # another catalog's change may move the Hive catalog
                return None  # (its last table dropped, one created elsewhere): everything
            out.add(schema)
    return frozenset(out)


def covering(focus: Focus, hive_service: str) -> Callable[[Fact], bool]:
    """Which facts a focus covers: everything but the Hive policies of other databases
    (compared without case, as Ranger's Hive resources are)."""
    if focus is None:
        return lambda fact: True
    databases = {s.names[1].casefold() for s in focus}

    def covers(fact: Fact) -> bool:
        if not isinstance(fact, PolicyFact) or fact.service != hive_service:
            return True
        return any(k == "database" and {d.casefold() for d in v} <= databases for k, v, _ in fact.resources)

    return covers
