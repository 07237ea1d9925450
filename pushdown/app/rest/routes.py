"""Every route the server answers, in one table: method, path template, the operation of
the requirement table that authorizes it, and the handler.

``operation`` is a name from :data:`pushdown.decide.requirements.OPERATIONS`, or
:data:`LOAD_OBJECT` (the load operation of the ``{type}`` segment's object type, e.g.
``load_table``, ``get_role``), or None (the version and ``CLOSE``: no requirement).
A route test (the route × caller matrix) iterates :data:`ROUTES`.

Templates are matched segment by segment against the raw path, each segment decoded on
its own (``%2F`` stays inside its segment); ``{name}`` matches one whole segment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pushdown.app.rest import metalakes, objects, owners, principals, roles
from pushdown.app.rest.call import Call
from pushdown.decide.requirements import LOAD_OPERATION
from pushdown.model.securables import SecurableType as T

Handler = Callable[[Call], dict[str, Any]]
LOAD_OBJECT = "load_object"


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    operation: str | None
    handler: Handler
    #: True when the route changes the model (the backend workers are woken after it)
    writes: bool = False

    @cached_property
    def segments(self) -> tuple[str, ...]:
        inner = self.template.strip("/")
        return tuple(inner.split("/")) if inner else ()

    def match(self, segments: tuple[str, ...]) -> dict[str, str] | None:
        mine = self.segments
        if len(mine) != len(segments):
            return None
        params = {}
        for want, got in zip(mine, segments, strict=True):
            if want.startswith("{"):
                params[want[1:-1]] = got
            elif want != got:
                return None
        return params

    def operation_for(self, params: Mapping[str, str]) -> str | None:
        """The requirement-table operation this route checks, for these path parameters."""
        if self.operation == LOAD_OBJECT:
            return LOAD_OPERATION[T(params["type"].lower())]
        return self.operation


M = "/api/metalakes/{metalake}"


def _object_routes(kind: T, base: str, item: str) -> list[Route]:
    word = objects.KINDS[kind][0]
    single = kind.value
    listing = f"list_{word}"
    return [
        Route("GET", f"{base}/{word}", listing, objects.list_objects(kind, listing)),
        Route("POST", f"{base}/{word}", f"create_{single}", objects.create_object(kind), True),
        Route("GET", f"{base}/{word}/{{{item}}}", f"load_{single}", objects.load_object(kind)),
        Route("DELETE", f"{base}/{word}/{{{item}}}", f"drop_{single}", objects.drop_object(kind), True),
    ]


#: The client's ``close()``: answered whatever the path, without authentication.
CLOSE = Route("CLOSE", "/", None, metalakes.close)
_C = f"{M}/catalogs/{{catalog}}"
_PU = f"{M}/permissions/users/{{user}}"
_PG = f"{M}/permissions/groups/{{group}}"
_S = f"{_C}/schemas/{{schema}}"

ROUTES: tuple[Route, ...] = (
    Route("GET", "/api/version", None, metalakes.version),
    CLOSE,
    # metalakes
    Route("GET", "/api/metalakes", "load_metalake", metalakes.list_metalakes),
    Route("POST", "/api/metalakes", "create_metalake", metalakes.create_metalake, True),
    Route("GET", M, "load_metalake", metalakes.load_metalake),
    Route("PUT", M, "alter_metalake", metalakes.alter_metalake, True),
    Route("DELETE", M, "drop_metalake", metalakes.drop_metalake, True),
    # users and groups
    Route("POST", f"{M}/users", "add_user", principals.add_user, True),
    Route("GET", f"{M}/users", "list_users", principals.list_users),
    Route("GET", f"{M}/users/{{user}}", "get_user", principals.get_user),
    Route("DELETE", f"{M}/users/{{user}}", "remove_user", principals.remove_user, True),
    Route("POST", f"{M}/groups", "add_group", principals.add_group, True),
    Route("GET", f"{M}/groups", "list_groups", principals.list_groups),
    Route("GET", f"{M}/groups/{{group}}", "get_group", principals.get_group),
    Route("DELETE", f"{M}/groups/{{group}}", "remove_group", principals.remove_group, True),
    # roles
    Route("POST", f"{M}/roles", "create_role", roles.create_role, True),
    Route("GET", f"{M}/roles", "list_roles", roles.list_roles),
    Route("GET", f"{M}/roles/{{role}}", "get_role", roles.get_role),
    Route("DELETE", f"{M}/roles/{{role}}", "delete_role", roles.delete_role, True),
    # permissions
    Route("PUT", f"{_PU}/grant", "grant_role", principals.grant_roles_to_user, True),
    Route("PUT", f"{_PU}/revoke", "revoke_role", principals.revoke_roles_from_user, True),
    Route("PUT", f"{_PG}/grant", "grant_role", principals.grant_roles_to_group, True),
    Route("PUT", f"{_PG}/revoke", "revoke_role", principals.revoke_roles_from_group, True),
    Route(
        "PUT",
        f"{M}/permissions/roles/{{role}}/{{type}}/{{fullName}}/grant",
        "grant_privilege",
        roles.grant_privileges,
        True,
    ),
    Route(
        "PUT",
        f"{M}/permissions/roles/{{role}}/{{type}}/{{fullName}}/revoke",
        "revoke_privilege",
        roles.revoke_privileges,
        True,
    ),
    # the web UI's edit of a role: the role's privileges replaced (checked on the role, then per object)
    Route("PUT", f"{M}/permissions/roles/{{role}}", "grant_privilege", roles.override_privileges, True),
    # owners and the roles bound to an object
    Route("GET", f"{M}/owners/{{type}}/{{fullName}}", LOAD_OBJECT, owners.get_owner),
    Route("PUT", f"{M}/owners/{{type}}/{{fullName}}", "set_owner", owners.set_owner, True),
    Route("GET", f"{M}/objects/{{type}}/{{fullName}}/roles", LOAD_OBJECT, owners.object_roles),
    # metadata objects (registered, never created on a server)
    *_object_routes(T.CATALOG, M, "catalog"),
    *_object_routes(T.SCHEMA, _C, "schema"),
    *_object_routes(T.TABLE, _S, "name"),
    *_object_routes(T.TOPIC, _S, "name"),
    *_object_routes(T.FILESET, _S, "name"),
)


def find(method: str, segments: tuple[str, ...]) -> tuple[Route | None, dict[str, str], bool]:
    """The route for a request: (route, parameters, whether the path matched another method)."""
    if method == "CLOSE":  # the client's close(), whatever path it names
        return CLOSE, {}, True
    path_known = False
    for route in ROUTES:
        params = route.match(segments)
        if params is None:
            continue
        if route.method == method:
            return route, params, True
        path_known = True
    return None, {}, path_known
