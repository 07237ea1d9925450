"""The REST routes of the stand-in: Ranger Admin's public v2 API and the plugin download endpoints.

A route is (method, path pattern, handler); a handler takes the store, the path's named groups,
the query (last value of each parameter) and the JSON body, and returns (status, JSON or None).
Lists of the public v2 API are plain JSON arrays paged by ``startIndex`` / ``pageSize`` (default
200 rows, as Ranger's ``ranger.db.maxrows.default``); the ``/service/plugins/policies`` and
``/service/roles/roles`` searches answer ``RangerPolicyList`` / ``RangerRoleList`` pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pushdown_lab.ranger_standin.errors import RangerError
from pushdown_lab.ranger_standin.store import Json, Store, clone

__all__ = ["DEFAULT_PAGE_SIZE", "ROUTES", "WRITE_METHODS", "Handler", "Reply"]

DEFAULT_PAGE_SIZE = 200
WRITE_METHODS = frozenset({"POST", "PUT", "DELETE"})

Reply = tuple[int, Any]
Handler = Callable[[Store, dict[str, str], dict[str, str], Any, str], Reply]

API = "/service/public/v2/api"


def _int(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise RangerError(400, f"Invalid value for parameter {what}: {value!r}") from None


def _page(items: list[Json], query: dict[str, str]) -> tuple[list[Json], int, int]:
    start = _int(query.get("startIndex", "0"), "startIndex")
    size = _int(query.get("pageSize", str(DEFAULT_PAGE_SIZE)), "pageSize")
    if start < 0 or size < 0:
        raise RangerError(400, "Invalid value for parameter startIndex/pageSize")
    return items[start : start + size], start, size


def _listed(
    store: Store, query: dict[str, str], policies: bool, filters: dict[str, str] | None = None
) -> Json:
    """One page of policies (or roles), copied under the store's lock; ``total`` counts them all."""
    with store.lock:
        wanted = query if filters is None else filters
        items = (store.list_policies if policies else store.list_roles)(wanted, copied=False)
        page, start, size = _page(items, query)
        return {"page": clone(page), "start": start, "size": size, "total": len(items)}


def _paged(store: Store, query: dict[str, str], key: str, policies: bool) -> Json:
    listed = _listed(store, query, policies)
    page, start, size = listed["page"], listed["start"], listed["size"]
    return {
        "startIndex": start,
        "pageSize": size,
        "totalCount": listed["total"],
        "resultSize": len(page),
        "sortType": "asc",
        "sortBy": "id",
        key: page,
    }


def _flag(query: dict[str, str], name: str) -> bool:
    return query.get(name, "").strip().lower() == "true"


def _body(body: Any) -> Json:
    if not isinstance(body, dict):
        raise RangerError(400, "Invalid input data: a JSON object was expected")
    return body


# service definitions -------------------------------------------------------------------
def _get_sdef(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.service_def(p["name"])


def _get_sdef_id(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.service_def_by_id(_int(p["id"], "id"))


def _list_sdefs(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    with store.lock:
        defs = [store.service_def(name) for name in store.service_defs]
    return 200, _page(defs, q)[0]


def _update_sdef(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.update_service_def(p["name"], _body(b), u)


def _update_sdef_id(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    name = store.service_def_by_id(_int(p["id"], "id"))["name"]
    return 200, store.update_service_def(name, _same_id(_body(b), int(p["id"]), "serviceDef id"), u)


def _create_sdef(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.create_service_def(_body(b), u)


# services ------------------------------------------------------------------------------
def _public(service: Json) -> Json:
    """A service as Ranger's REST API answers it (``RangerService``): its policy version, not
    the role version the store keeps for the role download (``roles/download``)."""
    return {k: v for k, v in service.items() if k != "roleVersion"}


def _create_service(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _public(store.create_service(_body(b), u))


def _get_service(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _public(store.service(p["name"]))


def _get_service_id(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _public(store.service(store.service_name_of_id(_int(p["id"], "id"))))


def _update_service(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _public(store.update_service(p["name"], _body(b), u))


def _same_id(body: Json, path_id: int, what: str) -> Json:
    """Ranger refuses an update whose body names another object than its path."""
    if body.get("id") is not None and str(body["id"]) != str(path_id):
        raise RangerError(400, f"{what} mismatch")
    return body


def _update_service_id(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    sid = _int(p["id"], "id")
    body = _same_id(_body(b), sid, "serviceID")
    return 200, _public(store.update_service(store.service_name_of_id(sid), body, u))


def _delete_service(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.delete_service(p["name"])
    return 204, None


def _delete_service_id(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.delete_service(store.service_name_of_id(_int(p["id"], "id")))
    return 204, None


def _list_services(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, [_public(s) for s in _page(store.list_services(q), q)[0]]


# policies ------------------------------------------------------------------------------
def _create_policy(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.create_policy(_body(b), u, create_missing=_flag(q, "createPrincipalsIfAbsent"))


def _get_policy(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.policy(_int(p["id"], "id"))


def _get_policy_by_name(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.policy_by_name(p["service"], p["name"])


def _update_policy(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    create = _flag(q, "createPrincipalsIfAbsent")
    pid = _int(p["id"], "id")
    return 200, store.update_policy(pid, _same_id(_body(b), pid, "policyID"), u, create_missing=create)


def _update_policy_by_name(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    pid = store.policy_by_name(p["service"], p["name"])["id"]
    return 200, store.update_policy(pid, _body(b), u, create_missing=_flag(q, "createPrincipalsIfAbsent"))


def _delete_policy(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.delete_policy(_int(p["id"], "id"))
    return 204, None


def _delete_policy_by_name(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    service, name = q.get("servicename"), q.get("policyname")
    if not service or not name:
        raise RangerError(400, "servicename and policyname are required")
    store.delete_policy(store.policy_by_name(service, name)["id"])
    return 204, None


def _find_policies(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _listed(store, q, policies=True)["page"]


def _service_policies(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.service(p["service"])
    return 200, _listed(store, q, policies=True, filters={**q, "serviceName": p["service"]})["page"]


def _plugin_policies(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _paged(store, q, "policies", policies=True)


def _download_policies(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    with store.lock:
        service = store.service(p["service"])
        known = _int(q.get("lastKnownVersion", "-1"), "lastKnownVersion")
        if known == service["policyVersion"]:
            return 304, None
        return 200, {
            "serviceName": service["name"],
            "serviceId": service["id"],
            "policyVersion": service["policyVersion"],
            "policyUpdateTime": service["policyUpdateTime"],
            "policies": store.list_policies({"serviceName": service["name"]}),
            "serviceDef": store.service_def(service["type"]),
            "auditMode": "audit-default",
        }


def _apply_policy(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    body = _body(b)
    found = store.list_policies(
        {"serviceName": str(body.get("service")), "policyName": str(body.get("name"))}
    )
    if found:
        return 200, store.update_policy(
            found[0]["id"], body, u, create_missing=_flag(q, "createPrincipalsIfAbsent")
        )
    return 200, store.create_policy(body, u, create_missing=_flag(q, "createPrincipalsIfAbsent"))


# roles ---------------------------------------------------------------------------------
def _create_role(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.create_role(_body(b), u, create_missing=_flag(q, "createNonExistUserGroup"))


def _update_role(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    create = _flag(q, "createNonExistUserGroup")
    rid = _int(p["id"], "id")
    return 200, store.update_role(rid, _same_id(_body(b), rid, "roleId"), u, create_missing=create)


def _delete_role(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.delete_role(_int(p["id"], "id"))
    return 204, None


def _delete_role_by_name(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    with store.lock:
        store.delete_role(store.role_id(p["name"]))
    return 204, None


def _get_role(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.role(_int(p["id"], "id"))


def _get_role_by_name(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.role_by_name(p["name"])


def _find_roles(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _listed(store, q, policies=False)["page"]


def _role_list(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _paged(store, q, "roles", policies=False)


def _role_names(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, [r["name"] for r in store.list_roles({}, copied=False)]


def _user_roles(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    roles = store.list_roles({}, copied=False)
    return 200, [r["name"] for r in roles if any(m["name"] == p["user"] for m in r["users"])]


def _grant_role(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.service(p["service"])
    store.grant_revoke(_body(b), grant=True, user=u)
    return 200, {"httpStatusCode": 200, "statusCode": 0}


def _revoke_role(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.service(p["service"])
    store.grant_revoke(_body(b), grant=False, user=u)
    return 200, {"httpStatusCode": 200, "statusCode": 0}


def _download_roles(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    with store.lock:
        service = store.service(p["service"])
        known = _int(q.get("lastKnownRoleVersion", "-1"), "lastKnownRoleVersion")
        if known == service["roleVersion"]:
            return 304, None
        return 200, {
            "serviceName": service["name"],
            "roleVersion": service["roleVersion"],
            "rangerRoles": store.list_roles({}),
        }


# security zones ------------------------------------------------------------------------
def _create_zone(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.create_zone(_body(b), u)


def _get_zone(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.zone(_int(p["id"], "id"))


def _get_zone_by_name(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, store.zone(store.zone_id(p["name"]))


def _update_zone(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    zid = _int(p["id"], "id")
    return 200, store.update_zone(zid, _same_id(_body(b), zid, "zoneId"), u)


def _delete_zone(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.delete_zone(_int(p["id"], "id"))
    return 204, None


def _delete_zone_by_name(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    store.delete_zone(store.zone_id(p["name"]))
    return 204, None


def _find_zones(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    return 200, _page(store.list_zones(q), q)[0]


def _zone_list(store: Store, p: dict[str, str], q: dict[str, str], b: Any, u: str) -> Reply:
    zones, start, size = _page(store.list_zones(q), q)
    return 200, {"startIndex": start, "pageSize": size, "resultSize": len(zones), "securityZones": zones}


_NAME = r"(?P<name>[^/]+)"
_ID = r"(?P<id>\d+)"
_SVC = r"(?P<service>[^/]+)"
_TABLE: list[tuple[str, str, Handler]] = [
    ("GET", f"{API}/servicedef/name/{_NAME}", _get_sdef),
    ("GET", f"{API}/servicedef/{_ID}", _get_sdef_id),
    ("PUT", f"{API}/servicedef/name/{_NAME}", _update_sdef),
    ("PUT", f"{API}/servicedef/{_ID}", _update_sdef_id),
    ("GET", f"{API}/servicedef/?", _list_sdefs),
    ("POST", f"{API}/servicedef/?", _create_sdef),
    ("POST", f"{API}/service/?", _create_service),
    ("GET", f"{API}/service/?", _list_services),
    ("GET", f"{API}/service/name/{_NAME}", _get_service),
    ("PUT", f"{API}/service/name/{_NAME}", _update_service),
    ("DELETE", f"{API}/service/name/{_NAME}", _delete_service),
    ("GET", f"{API}/service/{_ID}", _get_service_id),
    ("PUT", f"{API}/service/{_ID}", _update_service_id),
    ("DELETE", f"{API}/service/{_ID}", _delete_service_id),
    ("GET", f"{API}/service/{_SVC}/policy/?", _service_policies),
    ("GET", f"{API}/service/{_SVC}/policy/{_NAME}", _get_policy_by_name),
    ("PUT", f"{API}/service/{_SVC}/policy/{_NAME}", _update_policy_by_name),
    ("POST", f"{API}/policy/apply/?", _apply_policy),
    ("POST", f"{API}/policy/?", _create_policy),
    ("GET", f"{API}/policy/?", _find_policies),
    ("DELETE", f"{API}/policy/?", _delete_policy_by_name),
    ("GET", f"{API}/policy/{_ID}", _get_policy),
    ("PUT", f"{API}/policy/{_ID}", _update_policy),
    ("DELETE", f"{API}/policy/{_ID}", _delete_policy),
    ("GET", f"{API}/roles/names/?", _role_names),
    ("GET", f"{API}/roles/user/(?P<user>[^/]+)", _user_roles),
    ("PUT", f"{API}/roles/grant/{_SVC}", _grant_role),
    ("PUT", f"{API}/roles/revoke/{_SVC}", _revoke_role),
    ("GET", f"{API}/roles/name/{_NAME}", _get_role_by_name),
    ("DELETE", f"{API}/roles/name/{_NAME}", _delete_role_by_name),
    ("POST", f"{API}/roles/?", _create_role),
    ("GET", f"{API}/roles/?", _find_roles),
    ("GET", f"{API}/roles/{_ID}", _get_role),
    ("PUT", f"{API}/roles/{_ID}", _update_role),
    ("DELETE", f"{API}/roles/{_ID}", _delete_role),
    ("PUT", f"/service/roles/roles/grant/{_SVC}", _grant_role),
    ("PUT", f"/service/roles/roles/revoke/{_SVC}", _revoke_role),
    ("GET", "/service/roles/roles/?", _role_list),
    ("GET", f"/service/roles/download/{_SVC}", _download_roles),
    ("GET", f"/service/roles/secure/download/{_SVC}", _download_roles),
    ("POST", f"{API}/zones/?", _create_zone),
    ("GET", f"{API}/zones/?", _find_zones),
    ("GET", f"{API}/zones/name/{_NAME}", _get_zone_by_name),
    ("DELETE", f"{API}/zones/name/{_NAME}", _delete_zone_by_name),
    ("GET", f"{API}/zones/{_ID}", _get_zone),
    ("PUT", f"{API}/zones/{_ID}", _update_zone),
    ("DELETE", f"{API}/zones/{_ID}", _delete_zone),
    ("GET", "/service/zones/zones/?", _zone_list),
    ("POST", "/service/zones/zones/?", _create_zone),
    ("GET", f"/service/zones/zones/{_ID}", _get_zone),
    ("PUT", f"/service/zones/zones/{_ID}", _update_zone),
    ("DELETE", f"/service/zones/zones/{_ID}", _delete_zone),
    ("GET", "/service/plugins/policies/?", _plugin_policies),
    ("GET", f"/service/plugins/policies/download/{_SVC}", _download_policies),
    ("GET", f"/service/plugins/secure/policies/download/{_SVC}", _download_policies),
]
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = [
    (method, re.compile(pattern + r"\Z"), handler) for method, pattern, handler in _TABLE
]
