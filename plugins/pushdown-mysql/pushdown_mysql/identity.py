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
from pushdown.reconcile.scope import Region, Resolved
from pushdown_mysql.facts import Account

if TYPE_CHECKING:
    from pushdown_mysql.compile import Naming


def withheld(model: Model, naming: Naming) -> tuple[set[str], list[str]]:
    """The users who get nothing, and the notes that say why."""
    by_account: dict[Account, set[str]] = {}
    unmapped: list[str] = []
    for user in sorted(model.users):
        account = naming.try_account(user)
        if account is None:
            unmapped.append(user)
        else:
            by_account.setdefault(account, set()).add(user)
    clashing = {a: us for a, us in by_account.items() if len(us) > 1}
    notes = [
        f"users {', '.join(sorted(users))} all map to account {account}: their grants are withheld "
        "(narrower) until pushdown_map_principal tells them apart"
        for account, users in sorted(clashing.items())
    ]
    notes += [
        f"user {u}: pushdown_map_principal gives no account name for it; nothing is granted to it "
        "(narrower), and only a full sync revokes what the account it mapped to before holds"
        for u in unmapped
    ]
    return {u for users in clashing.values() for u in users} | set(unmapped), notes


def sharing(scope: Resolved, model: Model, naming: Naming) -> Resolved:
    """Each region that names users also covers every user of the model mapping to one of
    their accounts: what one of them may have there depends on the others (removing one of
    two colliding users gives the other its grants back in the same scoped sync)."""
    if all(r.users is None for r in scope.regions):
        return scope
    by_account: dict[Account, set[str]] = {}
    for user in model.users:
        account = naming.try_account(user)
        if account is not None:
            by_account.setdefault(account, set()).add(user)
    regions = []
    for r in scope.regions:
        if r.users is None:
            regions.append(r)
            continue
        accounts = {naming.try_account(u) for u in r.users}
        more = {v for a in accounts if a is not None for v in by_account.get(a, ())}
        regions.append(Region(r.users | more, r.roots) if more - r.users else r)
    return Resolved(tuple(regions))
