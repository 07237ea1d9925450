"""Model users and the metastore user names they map to, over the whole model: the
core's :class:`~pushdown.reconcile.identity.Identity`, compared without case.

Names one once case is folded are one principal on a metastore whose database compares
text without case (as MySQL's usual collation does), so ``Bob`` and ``bob`` clash. A
clash withholds everything from its users; a refused user gets nothing; a metastore
name no model user maps to any more is an orphan, whose grants and memberships made by
this backend are unwanted wherever a scope reads them.
"""

from __future__ import annotations

from pushdown.model.state import Model
from pushdown.reconcile.identity import Identity, Mapper


def identity_of(model: Model, naming: Mapper) -> Identity:
    """Every model user's metastore name (the whole model, never a scope's users)."""
    return Identity.of(model.users, naming, caseless=True)


def notes(identity: Identity) -> set[str]:
    """What the plan says about clashing and refused users."""
    out = {
        f"users {', '.join(sorted(users))} all map to metastore user {name!r}: their grants are withheld "
        "(narrower) until pushdown_map_principal tells them apart"
        for name, users in identity.clashes().items()
    }
    return out | {f"{why}: the user gets nothing (narrower)" for why in identity.refused.values()}


__all__ = ["Identity", "Mapper", "identity_of", "notes"]
