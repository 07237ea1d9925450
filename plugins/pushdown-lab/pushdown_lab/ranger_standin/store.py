"""The stand-in's state: service definitions, services and policies (roles: :mod:`rolestore`).

Policies are indexed by (service, name) and by Ranger's resource signature, so the duplicate
checks (3006, 3010) cost one lookup; role references are counted for the role-in-use check.
"""

from __future__ import annotations

import uuid

from pushdown_lab.ranger_standin.base import Json, clone, now_ms
from pushdown_lab.ranger_standin.errors import RangerError, not_found, validation_failure
from pushdown_lab.ranger_standin.rolestore import roles_named
from pushdown_lab.ranger_standin.validators import check_policy, resource_signature
from pushdown_lab.ranger_standin.zonestore import ZoneStore

__all__ = ["Json", "Store", "clone"]


class Store(ZoneStore):
    """In-memory Ranger Admin state (thread safe)."""

    def __init__(self, service_defs: list[Json], *, strict_principals: bool = False) -> None:
        super().__init__(strict_principals=strict_principals)
        for sdef in service_defs:
            self.create_service_def(sdef)

    # service definitions -------------------------------------------------------------
    def create_service_def(self, sdef: Json, user: str = "admin") -> Json:
        with self.lock:
            name = str(sdef.get("name") or "")
            if not name:
                raise validation_failure(
                    2006, f"Service def name[{name}] was null/empty/blank", "name", "missing"
                )
            if name in self.service_defs:
                raise validation_failure(2007, f"service def with the name[{name}] already exists", "name")
            obj = clone(sdef)
            if not isinstance(obj.get("id"), int) or any(
                d["id"] == obj["id"] for d in self.service_defs.values()
            ):
                obj["id"] = self._new_id()
            self._stamp(obj, user)
            self.service_defs[name] = obj
            return clone(obj)

    def service_def(self, name: str) -> Json:
        with self.lock:
            if name not in self.service_defs:
                raise not_found(f"service definition {name}")
            return clone(self.service_defs[name])

    def service_def_by_id(self, sid: int) -> Json:
        with self.lock:
            for sdef in self.service_defs.values():
                if sdef["id"] == sid:
                    return clone(sdef)
            raise not_found(f"service definition id={sid}")

    def update_service_def(self, name: str, sdef: Json, user: str = "admin") -> Json:
        """Replace a service definition (its name and id stay); its ``version`` goes up, and so
        does the policy version of every service of it (and of the services whose tag service
        is one, for the ``tag`` definition), as Ranger's ``ServiceDBStore`` does after an
        update (``updateServicesForServiceDefUpdate``): plugins download the changed
        definition with their policies."""
        with self.lock:
            old = self.service_defs.get(name)
            if old is None:
                raise not_found(f"service definition {name}")
            if sdef.get("name") not in (None, name):
                raise validation_failure(
                    2008,
                    f"id/name conflict: another service def already exists with "
                    f"name[{sdef.get('name')}], its id is [{old['id']}]",
                    "name",
                )
            obj = clone(sdef)
            obj["name"], obj["id"] = name, old["id"]
            self._stamp(obj, user, old)
            self.service_defs[name] = obj
            self.note("all")
            for service in self._services_of_def(name):
                self._bump_policies(service)
            return clone(obj)

    def _services_of_def(self, name: str) -> list[str]:
        """The services a definition's update moves: those of its type, and for the ``tag``
        definition the services whose tag service is one of them."""
        mine = [s for s, svc in self.services.items() if svc["type"] == name]
        if name == "tag":
            tags = set(mine)
            mine += [s for s, svc in self.services.items() if svc.get("tagService") in tags and s not in tags]
        return mine

    # services --------------------------------------------------------------------------
    def create_service(self, service: Json, user: str = "admin") -> Json:
        with self.lock:
            name = str(service.get("name") or "")
            if not name:
                raise validation_failure(1006, "Missing service name", "name", "missing")
            if name in self.services:
                raise validation_failure(
                    1008, f"Duplicate service name: name=[{name}], id=[{self.services[name]['id']}]", "name"
                )
            stype = str(service.get("type") or "")
            if stype not in self.service_defs:
                raise validation_failure(1010, f"Service def not found: service-def-name=[{stype}]", "type")
            obj = clone(service)
            obj["id"] = self._new_id()
            obj.setdefault("configs", {})
            obj["policyVersion"] = 1
            obj["roleVersion"] = 1
            obj["policyUpdateTime"] = now_ms()
            self._stamp(obj, user)
            self.services[name] = obj
            return clone(obj)

    def service(self, name: str) -> Json:
        with self.lock:
            if name not in self.services:
                raise not_found(f"service {name}")
            return clone(self.services[name])

    def service_name_of_id(self, sid: int) -> str:
        with self.lock:
            for name, svc in self.services.items():
                if svc["id"] == sid:
                    return name
            raise not_found(f"service id={sid}")

    def update_service(self, name: str, service: Json, user: str = "admin") -> Json:
        with self.lock:
            old = self.services.get(name)
            if old is None:
                raise not_found(f"service {name}")
            new_name = str(service.get("name") or name)
            if new_name != name and new_name in self.services:
                raise validation_failure(
                    1008,
                    f"Duplicate service name: name=[{new_name}], id=[{self.services[new_name]['id']}]",
                    "name",
                )
            obj = clone(service)
            for key in ("id", "policyVersion", "roleVersion", "policyUpdateTime"):
                obj[key] = old[key]
            obj["type"] = old["type"]
            obj["name"] = new_name
            self._stamp(obj, user, old)
            del self.services[name]
            self.services[new_name] = obj
            self.note("all")
            for policy in self.policies.values():
                if policy["service"] == name:
                    self._unindex(policy)
                    policy["service"] = new_name
                    self._index(policy)
            return clone(obj)

    def delete_service(self, name: str) -> None:
        with self.lock:
            if name not in self.services:
                raise not_found(f"service {name}")
            del self.services[name]
            self.note("all")
            for pid in [pid for pid, p in self.policies.items() if p["service"] == name]:
                self._unindex(self.policies.pop(pid))

    def list_services(self, filters: dict[str, str]) -> list[Json]:
        with self.lock:
            found = [
                s
                for s in self.services.values()
                if filters.get("serviceName") in (None, s["name"])
                and filters.get("serviceType") in (None, s["type"])
            ]
            return clone(found)

    def _bump_policies(self, service: str) -> None:
        svc = self.services[service]
        svc["policyVersion"] += 1
        svc["policyUpdateTime"] = now_ms()

    # policies --------------------------------------------------------------------------
    def _validate_policy(
        self, policy: Json, own_id: int | None, existing: Json | None = None, checked: bool = True
    ) -> Json:
        service = str(policy.get("service") or "")
        if not service:
            raise validation_failure(
                3002, "Internal error: missing field[service name]", "service name", "missing"
            )
        if service not in self.services:
            raise validation_failure(3007, f"no service found with name[{service}]", "service name")
        sdef = self.service_defs[self.services[service]["type"]]
        self.check_policy_zone(policy)
        if checked:
            check_policy(policy, sdef, existing)
        other_id = self._by_name.get((service, policy["name"]))
        if other_id is not None and other_id != own_id:
            field = "policy name" if own_id is None else "id/name"
            raise validation_failure(
                3006,
                f"Another policy already exists for this name: policy-id=[{other_id}], service=[{service}]",
                field,
            )
        other_id = self._by_signature.get((service, resource_signature(policy)))
        if other_id is not None and other_id != own_id:
            raise validation_failure(
                3010,
                "Another policy already exists for matching resource: "
                f"policy-name=[{self.policies[other_id]['name']}], service=[{service}]",
                "resources",
            )
        return sdef

    def _index(self, policy: Json) -> None:
        self._by_name[(policy["service"], policy["name"])] = policy["id"]
        self._by_signature[(policy["service"], resource_signature(policy))] = policy["id"]
        self._role_refs.update(roles_named(policy))

    def _unindex(self, policy: Json) -> None:
        self._by_name.pop((policy["service"], policy["name"]), None)
        self._by_signature.pop((policy["service"], resource_signature(policy)), None)
        self._role_refs.subtract(roles_named(policy))

    def _check_principals(self, policy: Json, create_missing: bool) -> None:
        self.principals.check_policy(policy, self._role_exists, create_missing, self._empty_role)

    def create_policy(self, policy: Json, user: str = "admin", *, create_missing: bool = False) -> Json:
        with self.lock:
            obj = clone(policy)
            obj.pop("id", None)
            obj.setdefault("isEnabled", True)
            if obj["isEnabled"] is False:
                obj.setdefault("guid", str(uuid.uuid4()))
            sdef = self._validate_policy(obj, None)
            self._check_principals(obj, create_missing)
            obj["id"] = self._new_id()
            obj["serviceType"] = sdef["name"]
            obj.setdefault("policyType", 0)
            obj.setdefault("policyPriority", 0)
            obj.setdefault("isAuditEnabled", True)
            for kind in ("policyItems", "denyPolicyItems", "allowExceptions", "denyExceptions"):
                obj.setdefault(kind, [])
            self._stamp(obj, user)
            self.policies[obj["id"]] = obj
            self._index(obj)
            self.note("policy", obj["id"])
            self._bump_policies(obj["service"])
            return clone(obj)

    def policy(self, pid: int) -> Json:
        with self.lock:
            if pid not in self.policies:
                raise not_found(f"policy id={pid}")
            return clone(self.policies[pid])

    def policy_by_name(self, service: str, name: str) -> Json:
        with self.lock:
            pid = self._by_name.get((service, name))
            if pid is not None:
                return clone(self.policies[pid])
            raise not_found(f"policy {name} in service {service}")

    def update_policy(
        self,
        pid: int,
        policy: Json,
        user: str = "admin",
        *,
        create_missing: bool = False,
        checked: bool = True,
    ) -> Json:
        """Policy ``pid`` replaced by ``policy``, checked as Ranger checks an update (``checked=False``:
        only its name, resource signature and zone, as a policy made by an older Ranger or written straight
        into Ranger's database is found; never through the REST API)."""
        with self.lock:
            old = self.policies.get(pid)
            if old is None:
                raise not_found(f"policy id={pid}")
            obj = clone(policy)
            obj["id"] = pid
            obj.setdefault("service", old["service"])
            obj.setdefault("name", old["name"])
            obj.setdefault("isEnabled", True)
            obj["guid"] = old["guid"]
            sdef = self._validate_policy(obj, pid, old, checked)
            self._check_principals(obj, create_missing)
            obj["serviceType"] = sdef["name"]
            obj.setdefault("policyType", 0)
            obj.setdefault("policyPriority", 0)
            self._stamp(obj, user, old)
            self._unindex(old)
            self.policies[pid] = obj
            self._index(obj)
            self.note("policy", pid)
            self._bump_policies(old["service"])
            if obj["service"] != old["service"]:
                self._bump_policies(obj["service"])
            return clone(obj)

    def delete_policy(self, pid: int) -> None:
        with self.lock:
            old = self.policies.pop(pid, None)
            if old is None:
                raise RangerError(400, f"no policy exists with ID={pid}")
            self._unindex(old)
            self.note("policy", pid)
            self._bump_policies(old["service"])

    def list_policies(self, filters: dict[str, str], *, copied: bool = True) -> list[Json]:
        """Policies matching Ranger's search filters, ordered by id (``copied=False``: the
        stored objects themselves, for a caller that holds :attr:`lock` and copies what it keeps)."""
        with self.lock:
            found = [p for pid, p in sorted(self.policies.items()) if _policy_matches(p, filters)]
            return clone(found) if copied else found


def _policy_matches(policy: Json, filters: dict[str, str]) -> bool:
    checks = {
        "serviceName": policy.get("service"),
        "policyName": policy.get("name"),
        "serviceType": policy.get("serviceType"),
        "policyType": str(policy.get("policyType") or 0),
        "zoneName": policy.get("zoneName") or "",
        "isEnabled": str(policy.get("isEnabled", True)).lower(),
        "policyId": str(policy.get("id")),
    }
    for key, actual in checks.items():
        if key in filters and filters[key] != actual:
            return False
    part = filters.get("policyNamePartial")
    if part is not None and part.lower() not in str(policy.get("name")).lower():
        return False
    label = filters.get("policyLabelsPartial")
    if label is not None and not any(
        label.lower() in str(x).lower() for x in policy.get("policyLabels") or ()
    ):
        return False
    for key, value in filters.items():
        if key.startswith("resource:"):
            res = (policy.get("resources") or {}).get(key[len("resource:") :])
            if res is None or value not in (res.get("values") or []):
                return False
    return True
