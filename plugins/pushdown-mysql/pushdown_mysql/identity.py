"""Which model users may not be given their grants because of how their names map. Pure.

Found over the WHOLE model, whatever the scope of the sync: a sync scoped to ``bob`` must
still see that ``Bob`` maps to the same account (``pushdown_map_principal`` lower-cases,
say), or it would grant that account what only bob may do, and Bob logs in there too.

- two or more users mapping to one account: none of them gets anything (the account
  would hold the union of their access);
- a user the hook gives no usable name (it raised, or answered nothing): that user gets
  nothing, and the other users' changes go on;
- a sync of some users covers every user sharing one of their accounts (:func:`sharing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pushdown.model.state import Model
from pushdown.reconcile.identity import Identity
from pushdown.reconcile.scope import Resolved
from pushdown_mysql.facts import Account

if TYPE_CHECKING:
    from pushdown_mysql.compile import AccountNaming


def scope_users(scope: Resolved | None) -> frozenset[str] | None:
    """The users ``scope`` names (``None``: every user, or no scope given)."""
    if scope is None or any(r.users is None for r in scope.regions):
        return None
    return frozenset().union(*(r.users or () for r in scope.regions))


def identity_of(model: Model, naming: AccountNaming, scope: Resolved | None = None) -> Identity:
    """Every model user's account name, kept by ``naming`` between syncs while no plugin
    implements ``pushdown_map_principal`` (only the users added since, and those ``scope``
    grants to, are mapped again); with such a hook every user is mapped again on each sync
    that grants, since its answer may change for a user outside the scope
    (:class:`~pushdown.reconcile.identity.KeptIdentity`)."""
    return naming.kept.of(model.users, scope_users(scope))


def withheld(
    model: Model, naming: AccountNaming, scope: Resolved | None = None
) -> tuple[set[str], list[str]]:
    """The users who get nothing, and the notes that say why (the core's
    :class:`~pushdown.reconcile.identity.Identity`; account names compare with case)."""
    identity = identity_of(model, naming, scope)
    notes = [
        f"users {', '.join(sorted(users))} all map to account {Account(naming.prefix + name, naming.host)}: "
        "their grants are withheld (narrower) until pushdown_map_principal tells them apart"
        for name, users in sorted(identity.clashes().items())
    ]
    notes += [
        f"user {u}: pushdown_map_principal gives no account name for it; nothing is granted to it "
        "(narrower), and only a full sync revokes what the account it mapped to before holds"
        for u in sorted(identity.refused)
    ]
    return set(identity.withheld), notes


def sharing(scope: Resolved, model: Model, naming: AccountNaming) -> Resolved:
    """Each region that names users also covers every user of the model mapping to one of
    their accounts: what one of them may have there depends on the others (removing one of
    two colliding users gives the other its grants back in the same scoped sync)."""
    return identity_of(model, naming, scope).widened(scope)
