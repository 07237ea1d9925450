"""Model users and the metastore user names they map to, over the whole model: the
core's :class:`~pushdown.reconcile.identity.Identity`, compared without case.

Names one once case is folded are one principal on a metastore whose database compares
text without case (as MySQL's usual collation does), so ``Bob`` and ``bob`` clash. A
clash withholds everything from its users; a refused user gets nothing; a metastore
name no model user maps to any more is an orphan, whose grants and memberships made by
this backend are unwanted wherever a scope reads them.

The backend keeps the mapping between syncs (:func:`kept_identity`): while no plugin
implements ``pushdown_map_principal`` only the users added since are mapped; with such a
hook every sync that grants maps every user again, so a clash caused by a user outside
the scope is still seen before anything is granted.
"""

from __future__ import annotations

from pushdown.model.state import Model
from pushdown.reconcile.identity import Identity, KeptIdentity, Mapper
from pushdown.reconcile.scope import Resolved


def identity_of(model: Model, naming: Mapper) -> Identity:
    """Every model user's metastore name (the whole model, never a scope's users)."""
    return Identity.of(model.users, naming, caseless=True)


def scope_users(scope: Resolved) -> frozenset[str] | None:
    """The users ``scope`` names (``None``: every user)."""
    if any(r.users is None for r in scope.regions):
        return None
    return frozenset().union(*(r.users or () for r in scope.regions))


def kept_identity(model: Model, kept: KeptIdentity, scope: Resolved) -> Identity:
    """Every model user's metastore name, kept by ``kept`` between syncs. The users the
    scope grants to are mapped again (:class:`KeptIdentity`); a scope over every user
    asks for everyone only while the mapping may change underneath (``kept.stable()``
    false: a hook): without a hook the kept answers are the settings' own."""
    fresh = scope_users(scope)
    if fresh is None and kept.stable():
        fresh = frozenset()
    # the same model object with no user added or removed since: the users kept, no pass
    # over every user to compare them (:attr:`Model.roster_stamped`)
    return kept.of(model.users, fresh, roster=(model, model.roster_stamped))


def notes(identity: Identity) -> set[str]:
    """What the plan says about clashing and refused users."""
    out = {
        f"users {', '.join(sorted(users))} all map to metastore user {name!r}: their grants are withheld "
        "(narrower) until pushdown_map_principal tells them apart"
        for name, users in identity.clashes().items()
    }
    return out | {f"{why}: the user gets nothing (narrower)" for why in identity.refused.values()}


__all__ = ["Identity", "KeptIdentity", "Mapper", "identity_of", "kept_identity", "notes", "scope_users"]
