"""The stand-in's security zones, as Ranger Admin's SecurityZoneREST keeps them.

A zone (``RangerSecurityZone``) names, per service, resource sets (``{"database": ["d"],
"table": ["*"]}``): a request on a resource at or below one of them is evaluated by the
zone's policies only (policies carrying ``zoneName``), never by the unzoned ones.
Plugins receive zones with their policies, so a zone write bumps the policy version of
every service it names (before and after the write), as Ranger does.
"""

from __future__ import annotations

from pushdown_lab.ranger_standin.base import Json, clone
from pushdown_lab.ranger_standin.errors import RangerError, not_found, validation_failure
from pushdown_lab.ranger_standin.rolestore import RoleStore

__all__ = ["ZoneStore"]


class ZoneStore(RoleStore):
    """Security zones (global to Ranger Admin; each names services and their resources)."""

    def _bump_zone_services(self, *zones: Json | None) -> None:
        self.note("all")
        for zone in zones:
            for name in (zone or {}).get("services") or {}:
                if name in self.services:
                    self.services[name]["policyVersion"] += 1

    def _check_zone(self, zone: Json, own_id: int | None) -> Json:
        name = str(zone.get("name") or "").strip()
        if not name:
            raise RangerError(400, "Invalid security zone name: it must not be empty")
        for zid, other in self.zones.items():
            if other["name"] == name and zid != own_id:
                raise RangerError(400, f"Another security zone already exists for this name: zone-id=[{zid}]")
        services = zone.get("services") or {}
        if not isinstance(services, dict):
            raise RangerError(400, "Invalid security zone: services must be an object")
        for service, spec in services.items():
            if service not in self.services:
                raise RangerError(400, f"Invalid service: service [{service}] does not exist")
            for resource in (spec or {}).get("resources") or []:
                if not isinstance(resource, dict) or not all(isinstance(v, list) for v in resource.values()):
                    raise RangerError(400, f"Invalid resources of service [{service}] in zone [{name}]")
        obj = clone(zone)
        obj["name"] = name
        obj["services"] = {
            s: {"resources": list((v or {}).get("resources") or [])} for s, v in services.items()
        }
        for key in ("tagServices", "adminUsers", "adminUserGroups", "auditUsers", "auditUserGroups"):
            obj.setdefault(key, [])
        obj.setdefault("description", "")
        return obj

    def create_zone(self, zone: Json, user: str = "admin") -> Json:
        with self.lock:
            obj = self._check_zone(zone, None)
            obj["id"] = self._new_id()
            self._stamp(obj, user)
            self.zones[obj["id"]] = obj
            self._bump_zone_services(obj)
            return clone(obj)

    def zone(self, zid: int) -> Json:
        with self.lock:
            if zid not in self.zones:
                raise not_found(f"security zone id={zid}")
            return clone(self.zones[zid])

    def zone_id(self, name: str) -> int:
        with self.lock:
            for zid, zone in self.zones.items():
                if zone["name"] == name:
                    return zid
            raise not_found(f"security zone {name}")

    def update_zone(self, zid: int, zone: Json, user: str = "admin") -> Json:
        with self.lock:
            old = self.zones.get(zid)
            if old is None:
                raise not_found(f"security zone id={zid}")
            obj = self._check_zone(zone, zid)
            if obj["name"] != old["name"] and self._zone_used(old["name"]):
                raise RangerError(400, f"Security zone [{old['name']}] is in use: it cannot be renamed")
            obj["id"] = zid
            self._stamp(obj, user, old)
            self.zones[zid] = obj
            self._bump_zone_services(old, obj)
            return clone(obj)

    def delete_zone(self, zid: int) -> None:
        with self.lock:
            old = self.zones.get(zid)
            if old is None:
                raise not_found(f"security zone id={zid}")
            if self._zone_used(old["name"]):
                raise RangerError(400, f"Security zone [{old['name']}] has policies: delete them first")
            del self.zones[zid]
            self._bump_zone_services(old)

    def list_zones(self, filters: dict[str, str]) -> list[Json]:
        with self.lock:
            wanted = filters.get("zoneName")
            return clone([z for _, z in sorted(self.zones.items()) if wanted in (None, z["name"])])

    def _zone_used(self, name: str) -> bool:
        return any(p.get("zoneName") == name for p in self.policies.values())

    def check_policy_zone(self, policy: Json) -> None:
        """A zoned policy's zone must exist (3033; Ranger's message names the policy id where it
        means the zone) and name the policy's service (3048)."""
        name = policy.get("zoneName")
        if not name:
            return
        for zone in self.zones.values():
            if zone["name"] == name:
                if policy.get("service") not in zone["services"]:
                    raise validation_failure(
                        3048,
                        f"Service name = {policy.get('service')} is not associated to Zone name = {name}",
                        "zoneName",
                    )
                return
        raise validation_failure(
            3033, f"Non-existent Zone name={_java(policy.get('id'))} in policy create", "zoneName"
        )


def _java(value: object) -> str:
    """A value as Java's message formatting prints it (``null`` for none)."""
    return "null" if value is None else str(value)
