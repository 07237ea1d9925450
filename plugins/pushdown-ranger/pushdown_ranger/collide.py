"""Model users that map to one Ranger principal (``pushdown_map_principal``). Pure.

Ranger cannot tell such users apart: whatever reaches the principal reaches all of them.
The model is compiled with each colliding user under a name of its own (so its items are
its own), then those names are folded into the principal, which gets only what every
colliding user is allowed: an allow item where each of them has one on the same resource
set and access, a deny item where any of them has one (through any role or group of the
model). The principal leaves the model roles' members (it holds the result on its own
per-user role instead). Detected over the whole model, whatever the sync's scope.
Through groups the enforcing host resolves, the principal still gets what those groups
hold, as any member would.
"""

from __future__ import annotations

from dataclasses import replace

from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.plan import Fact
from pushdown_ranger.facts import Pair, PolicyFact, RoleFact
from pushdown_ranger.naming import Naming

MARK = "\x00"


def collisions(model: Model, naming: Naming) -> dict[str, frozenset[str]]:
    """Ranger user name -> the model users (two or more) mapping to it."""
    found: dict[str, set[str]] = {}
    for user in model.users:
        found.setdefault(naming.user(user), set()).add(user)
    return {name: frozenset(users) for name, users in found.items() if len(users) > 1}


def apart(naming: Naming, colliding: dict[str, frozenset[str]]) -> Naming:
    """``naming`` with a name of its own for each colliding user."""
    principal_of = {u: p for p, users in colliding.items() for u in users}
    base = naming.map_principal

    def mapped(principal: Principal) -> str:
        if principal.kind is PrincipalKind.USER and principal.name in principal_of:
            return f"{principal_of[principal.name]}{MARK}{principal.name}"
        return base(principal)

    return replace(naming, map_principal=mapped)


def fold(
    desired: Desired,
    model: Model,
    naming: Naming,
    colliding: dict[str, frozenset[str]],
    elsewhere: frozenset[str],
) -> Desired:
    """``desired`` (compiled with :func:`apart`) with each colliding principal narrowed."""
    if not colliding:
        return desired
    roles = [f for f in desired.facts if isinstance(f, RoleFact)]
    policies = [f for f in desired.facts if isinstance(f, PolicyFact)]
    apart_names = {f"{p}{MARK}{u}": p for p, users in colliding.items() for u in users}
    user_roles = {naming.user_role_prefix + a for a in apart_names}
    reach: dict[str, set[str]] = {}
    for p, users in colliding.items():
        for u in users:
            own = f"{p}{MARK}{u}"
            groups = {naming.group(g) for g in model.user_groups.get(u, ())}
            reach[own] = {naming.user_role_prefix + own}
            reach[own] |= {r.name for r in roles if own in r.users or r.groups & groups}
    out_policies: list[Fact] = []
    for fact in policies:
        allow = {pair for pair in fact.allow if pair[0] not in user_roles}
        deny = {pair for pair in fact.deny if pair[0] not in user_roles}
        accesses = {a for _, a in fact.allow | fact.deny}
        for p, users in colliding.items():
            mine = naming.user_role_prefix + p
            for access in accesses:
                owns = [f"{p}{MARK}{u}" for u in users]
                if all(_has(fact.allow, reach[o], access) for o in owns):
                    allow.add((mine, access))
                if any(_has(fact.deny, reach[o], access) for o in owns):
                    deny.add((mine, access))
        if allow or deny:
            out_policies.append(PolicyFact(fact.service, fact.resources, frozenset(allow), frozenset(deny)))
    named = elsewhere | {r for f in out_policies if isinstance(f, PolicyFact) for r, _ in f.allow | f.deny}
    out_roles: list[Fact] = []
    for role in roles:
        if role.name in user_roles:
            continue
        out_roles.append(replace(role, users=frozenset(u for u in role.users if u not in apart_names)))
    for p in colliding:
        if naming.user_role_prefix + p in named:
            out_roles.append(RoleFact(naming.user_role_prefix + p, frozenset({p})))
    notes = [
        f"users {', '.join(sorted(users))} map to one Ranger user {p!r}: it gets only what all of them "
        "are allowed (narrower)"
        for p, users in sorted(colliding.items())
    ]
    return replace(desired, facts=frozenset(out_roles + out_policies), notes=(*desired.notes, *notes))


def _has(pairs: frozenset[Pair], roles: set[str], access: str) -> bool:
    return any(role in roles and a == access for role, a in pairs)
