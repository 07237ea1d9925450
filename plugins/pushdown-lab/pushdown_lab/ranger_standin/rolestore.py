"""The stand-in's roles, as Ranger Admin's RoleREST keeps them: create, update, delete, grant,
revoke, and the refusals (a name in use, a role still referenced by a policy or another role)."""

from __future__ import annotations

from pushdown_lab.ranger_standin.base import Json, StoreBase, clone
from pushdown_lab.ranger_standin.errors import RangerError, validation_failure
from pushdown_lab.ranger_standin.validators import ITEM_KINDS, check_role

__all__ = ["RoleStore", "roles_named"]


class RoleStore(StoreBase):
    """Roles (global to Ranger Admin, not per service)."""

    def _role_exists(self, name: str) -> bool:
        return name in self._role_ids

    def _empty_role(self, name: str) -> None:
        self.create_role({"name": name}, create_missing=True)

    # roles ------------------------------------------------------------------------------
    def _role_in_use(self, name: str) -> str | None:
        if self._role_refs[name] > 0:
            return "policies"
        for role in self.roles.values():
            if any(m["name"] == name for m in role.get("roles") or []):
                return "other roles"
        return None

    def role_id(self, name: str) -> int:
        rid = self._role_ids.get(name)
        if rid is None:
            raise RangerError(400, f"Role with name: {name} does not exist")
        return rid

    def create_role(self, role: Json, user: str = "admin", *, create_missing: bool = False) -> Json:
        with self.lock:
            check_role(role)
            name = role["name"]
            if name in self._role_ids:
                raise validation_failure(
                    4005, f"Another RangerRole already exists for this name: Role =[{name}]]", "name"
                )
            self.principals.check_role(role, self._role_exists, create_missing, self._empty_role)
            obj = _normal_role(role)
            obj["id"] = self._new_id()
            obj.setdefault("createdByUser", user)
            self._stamp(obj, user)
            self.roles[obj["id"]] = obj
            self._role_ids[name] = obj["id"]
            self.note("role", obj["id"])
            self._bump_roles()
            return clone(obj)

    def role(self, rid: int) -> Json:
        with self.lock:
            if rid not in self.roles:
                raise RangerError(400, "Data Not Found for given Id")  # Ranger's words, and its 400
            return clone(self.roles[rid])

    def role_by_name(self, name: str) -> Json:
        with self.lock:
            if not self._role_exists(name):
                raise RangerError(400, f"Role with name: {name} does not exist.")
            return clone(self.roles[self.role_id(name)])

    def update_role(self, rid: int, role: Json, user: str = "admin", *, create_missing: bool = False) -> Json:
        with self.lock:
            old = self.roles.get(rid)
            if old is None:
                raise validation_failure(4006, f"No RangerRole found for id[{rid}]", "id")
            check_role(role)
            name = role["name"]
            if name != old["name"]:
                if name in self._role_ids:
                    raise validation_failure(
                        4005, f"Another RangerRole already exists for this name: Role =[{name}]]", "name"
                    )
                where = self._role_in_use(old["name"])
                if where is not None:
                    raise RangerError(
                        400,
                        f"Rolename for '{old['name']}' can not be updated as it is "
                        f"referenced in one or more {where}",
                    )
            self.principals.check_role(role, self._role_exists, create_missing, self._empty_role)
            obj = _normal_role(role)
            obj["id"] = rid
            obj["createdByUser"] = old.get("createdByUser")
            self._stamp(obj, user, old)
            self.roles[rid] = obj
            del self._role_ids[old["name"]]
            self._role_ids[obj["name"]] = rid
            self.note("role", rid)
            self._bump_roles()
            return clone(obj)

    def delete_role(self, rid: int) -> None:
        with self.lock:
            old = self.roles.get(rid)
            if old is None:
                raise RangerError(400, "Data Not Found for given Id")
            where = self._role_in_use(old["name"])
            if where is not None:
                raise RangerError(
                    400, f"Role '{old['name']}' can not be deleted as it is referenced in one or more {where}"
                )
            del self.roles[rid]
            del self._role_ids[old["name"]]
            self.note("role", rid)
            self._bump_roles()

    def list_roles(self, filters: dict[str, str], *, copied: bool = True) -> list[Json]:
        """Roles matching ``roleName`` / ``roleNamePartial``, ordered by id (``copied`` as above)."""
        with self.lock:
            wanted = filters.get("roleName")
            part = (filters.get("roleNamePartial") or "").lower()
            found = [
                r
                for rid, r in sorted(self.roles.items())
                if wanted in (None, r["name"]) and part in r["name"].lower()
            ]
            return clone(found)

    def grant_revoke(self, request: Json, grant: bool, user: str = "admin") -> None:
        """Add (or remove) users, groups and roles to (from) each of the request's target roles."""
        with self.lock:
            targets = list(request.get("targetRoles") or [])
            ids = [self.role_id(name) for name in targets]
            for rid in ids:
                role = clone(self.roles[rid])
                for kind in ("users", "groups", "roles"):
                    names = list(request.get(kind) or [])
                    members = [m for m in role.get(kind) or [] if m["name"] not in names]
                    if grant:
                        members += [{"name": n, "isAdmin": bool(request.get("grantOption"))} for n in names]
                    role[kind] = members
                self.update_role(rid, role, user)


def roles_named(policy: Json) -> list[str]:
    """Every role name a policy's items use (a name once per policy)."""
    names: set[str] = set()
    for kind in ITEM_KINDS:
        for item in policy.get(kind) or []:
            names.update(item.get("roles") or [])
    return sorted(names)


def _normal_role(role: Json) -> Json:
    obj = clone(role)
    obj.pop("id", None)
    for kind in ("users", "groups", "roles"):
        obj[kind] = [
            {"name": m["name"], "isAdmin": bool(m.get("isAdmin", False))} for m in obj.get(kind) or []
        ]
    obj.setdefault("options", {})
    obj.setdefault("description", "")
    return obj
