"""Translate a model scope into the server scope MySQL facts are judged against.

The metalake and any catalog (this backend's or one it may just have stopped
enforcing) become the whole server; schemas and tables of the enforced
catalog become ``ObjectRef`` s under :data:`~pushdown_mysql.facts.SERVER`; a group
widens to its members and a role to every user holding it (directly or through a
group), since MySQL holds grants per user; users become their account names.
"""

from __future__ import annotations

from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope
from pushdown_mysql.compile import Naming
from pushdown_mysql.facts import SERVER


def users_in(model: Model, principal: Principal) -> set[str]:
    if principal.kind is PrincipalKind.USER:
        return {principal.name}
    if principal.kind is PrincipalKind.GROUP:
        return set(model.groups.get(principal.name, ()))
    return model.holders_of(principal.name)


def server_object(obj: ObjectRef, catalog: str | None) -> ObjectRef | Scope | None:
    """The server-side object for ``obj``; ``Scope.everything()`` for the whole server."""
    if obj.type in (SecurableType.METALAKE, SecurableType.CATALOG):
        # Any catalog event may change which catalog this server enforces (a catalog
        # dropped, renamed or pointed at another backend): look at the whole server.
        return Scope.everything()
    if obj.catalog is None or obj.catalog != catalog:
        return None
    if obj.type is SecurableType.SCHEMA:
        return ObjectRef(SecurableType.SCHEMA, (SERVER, obj.names[1]))
    if obj.type is SecurableType.TABLE:
        return ObjectRef(SecurableType.TABLE, (SERVER, *obj.names[1:]))
    return None


def server_scope(model: Model, scope: Scope, catalog: str | None, naming: Naming) -> Scope:
    if scope.full:
        return scope
    objects: set[ObjectRef] = set()
    for obj in scope.objects:
        mapped = server_object(obj, catalog)
        if isinstance(mapped, Scope):
            return mapped
        if mapped is not None:
            objects.add(mapped)
    users: set[str] = set()
    for principal in scope.principals:
        users |= users_in(model, principal)
    accounts = {Principal.user(naming.account(u).user) for u in users}
    return Scope.of(objects, accounts)
