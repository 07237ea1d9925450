"""The named changes: one method per change of the model, each naming the requirement-table
row its actor must pass.

Longer than ~250 lines: every named change in one place, with the extra check of those that
would lift a DENY (removals of principals, drops and renames of objects)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pushdown.app.service.base import ChangeResult, ObjectLike, _obj
from pushdown.app.service.changing import Changing, _converge_events
from pushdown.app.service.denies import (
    DENIES_STAY,
    GROUP_DENIES_STAY,
    MEMBER_DENIES_STAY,
    MEMBER_GRANTS_ROLES,
    NAMED_OWNER,
    OBJECT_DENIES_STAY,
    OWNER_DENIES_STAY,
    ROLE_DENIES_STAY,
    denies_lifted,
    group_denies_lifted,
    holds_deny,
    may_revoke_roles,
    member_denies_lifted,
    owner_passes,
    roles_unseen_or_denying,
    stays_a_user,
)
from pushdown.decide.evaluator import Evaluator
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import Forbidden, ModelError
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.directory import with_members
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.model.text import check_name


class Changes(Changing):
    """Each change the library offers, as one call: users, groups, roles, grants, owners,
    objects, a whole model."""

    def add_user(self, user: str) -> ChangeResult:
        return self._one(ch.add_user, user, op="add_user", on=user)

    def remove_user(self, user: str) -> ChangeResult:
        """Remove a user: his roles, his groups' memberships and what he owns go with him.

        A user the directory still names stays a user of the metalake (the roles of the
        directory's groups apply to him), so removing him would lift the DENYs of the roles
        he holds and of the model's groups he leaves while the directory's ALLOWs stay: a
        checked actor must also be allowed to revoke each of those roles (``revoke_role``),
        or nothing is removed. Which roles and groups he holds, and whether they hold a
        DENY, a holder of MANAGE_USERS may not see: such a user is removed only by an actor
        who may revoke roles at all, so a refusal tells only what the removal would show
        (that he stays listed)."""
        actor = self.actor

        def build(model: Model) -> list[ev.Event]:
            if actor is not None and not actor.trusted:
                evaluator = Evaluator(self._decisions_on(model))
                stays = user in model.users and stays_a_user(model, user)
                if stays and not may_revoke_roles(evaluator, actor.user):
                    raise Forbidden(actor.user, "remove_user", f"user {user}", DENIES_STAY)
                for role in denies_lifted(model, user):
                    if not evaluator.authorize(actor.user, "revoke_role", role, explain=False).allowed:
                        raise Forbidden(actor.user, "remove_user", f"user {user}", DENIES_STAY)
            return ch.remove_user(model, user)

        return self.change(build, operation="remove_user", target=user)

    def add_group(self, group: str, members: Iterable[str] = ()) -> ChangeResult:
        return self._one(ch.add_group, group, list(members), op="add_group", on=group)

    def remove_group(self, group: str) -> ChangeResult:
        """Remove a group and its roles. Its members stay users, their other roles and
        groups applying: removing a group with members whose roles carry a DENY lifts it, so
        a checked actor must also be allowed to revoke each such role (``revoke_role``), or
        nothing is removed. Its members, and what they keep another way, a group manager
        may not see: an actor who may not revoke roles removes a group only when each of its
        roles is one he may read and holds no DENY."""
        actor = self.actor

        def build(model: Model) -> list[ev.Event]:
            if actor is not None and not actor.trusted and group in model.groups:
                evaluator = Evaluator(self._decisions_on(model))
                if not may_revoke_roles(evaluator, actor.user) and roles_unseen_or_denying(
                    model, evaluator, actor.user, group
                ):
                    raise Forbidden(actor.user, "remove_group", f"group {group}", GROUP_DENIES_STAY)
                for role in group_denies_lifted(model, group):
                    if not evaluator.authorize(actor.user, "revoke_role", role, explain=False).allowed:
                        raise Forbidden(actor.user, "remove_group", f"group {group}", GROUP_DENIES_STAY)
            return ch.remove_group(model, group)

        return self.change(build, operation="remove_group", target=group)

    def add_member(self, group: str, user: str) -> ChangeResult:
        """Take a user into a group: he holds its roles from then on, so a checked actor
        must also be allowed to grant each (``grant_role``), or nothing is changed; a group
        manager (who sees the group's roles by name) fills a group holding no role. Else a
        holder of MANAGE_GROUPS would grant himself any group's roles, or hand a user
        removed and added again the ALLOWs of his groups without the DENYs of his roles."""
        actor = self.actor

        def build(model: Model) -> list[ev.Event]:
            if actor is not None and not actor.trusted and user not in model.groups.get(group, ()):
                evaluator = Evaluator(self._decisions_on(model))
                for role in sorted(model.group_roles.get(group, ())):
                    if not evaluator.authorize(actor.user, "grant_role", role, explain=False).allowed:
                        raise Forbidden(actor.user, "add_group", f"group {group}", MEMBER_GRANTS_ROLES)
            return ch.add_member(model, group, user)

        return self.change(build, operation="add_group", target=group)

    def remove_member(self, group: str, user: str) -> ChangeResult:
        """Take a user out of a group. He stays a user: when the group's roles hold a DENY
        (and the directory does not keep him in the group), a checked actor must also be
        allowed to revoke each such role (``revoke_role``), or nothing is changed; an actor
        who may not revoke roles, whatever the user keeps another way (which he may not
        see), when a role of the group holds a DENY or is one he may not read."""
        actor = self.actor

        def build(model: Model) -> list[ev.Event]:
            leaves = user in model.groups.get(group, ()) and user not in model.external_members.get(group, ())
            if actor is not None and not actor.trusted and leaves:
                evaluator = Evaluator(self._decisions_on(model))
                if not may_revoke_roles(evaluator, actor.user) and roles_unseen_or_denying(
                    model, evaluator, actor.user, group
                ):
                    raise Forbidden(actor.user, "remove_group", f"group {group}", MEMBER_DENIES_STAY)
                for role in member_denies_lifted(model, group, user):
                    if not evaluator.authorize(actor.user, "revoke_role", role, explain=False).allowed:
                        raise Forbidden(actor.user, "remove_group", f"group {group}", MEMBER_DENIES_STAY)
            return ch.remove_member(model, group, user)

        return self.change(build, operation="remove_group", target=group)

    def create_role(self, role: str, owner: str | None = None) -> ChangeResult:
        """Create a role; an acting user who is in the model becomes its owner unless
        ``owner`` names another (only the trusted administrator may: :meth:`_named_owner`)."""
        self._named_owner(owner, "create_role", f"role {role}")
        return self.change(
            lambda model: ch.create_role(model, role, owner if owner is not None else self._author),
            operation="create_role",
            target=role,
        )

    def _named_owner(self, owner: str | None, op: str, shown: str) -> None:
        """Refuse a checked actor naming another owner than himself for what he creates: it
        would hand that principal ownership past every check of :meth:`set_owner` (the
        DENYs on the object's ancestors, which an owner's rights pass)."""
        actor = self.actor
        if owner is not None and actor is not None and not actor.trusted and owner != actor.user:
            raise Forbidden(actor.user, op, shown, NAMED_OWNER)

    def delete_role(self, role: str) -> ChangeResult:
        """Delete a role: revoked from everyone, its grants with it. A DENY it holds is
        lifted for whoever holds it, so a checked actor must also be allowed to revoke each
        (``revoke_privilege`` on its object) or to revoke roles (``revoke_role``), or nothing
        is deleted; whoever holds the role decides nothing (the role's owner may not see
        that)."""
        actor = self.actor

        def build(model: Model) -> list[ev.Event]:
            if actor is not None and not actor.trusted and holds_deny(model, role):
                evaluator = Evaluator(self._decisions_on(model))
                denied = {g.object for g in model.roles.get(role, ()) if g.condition is Condition.DENY}
                if not may_revoke_roles(evaluator, actor.user) and not all(
                    evaluator.authorize(actor.user, "revoke_privilege", obj, explain=False).allowed
                    for obj in sorted(denied, key=str)
                ):
                    raise Forbidden(actor.user, "delete_role", f"role {role}", ROLE_DENIES_STAY)
            return ch.delete_role(model, role)

        return self.change(build, operation="delete_role", target=role)

    def grant_privileges(
        self,
        role: str,
        obj: ObjectLike,
        privileges: Iterable[Privilege | str],
        condition: Condition | str = Condition.ALLOW,
    ) -> ChangeResult:
        cond = condition if isinstance(condition, Condition) else Condition.parse(condition)
        ref = _obj(obj)
        return self._one(ch.grant_privileges, role, ref, list(privileges), cond, op="grant_privilege", on=ref)

    def revoke_privileges(
        self,
        role: str,
        obj: ObjectLike,
        privileges: Iterable[Privilege | str],
        condition: Condition | str = Condition.ALLOW,
    ) -> ChangeResult:
        cond = condition if isinstance(condition, Condition) else Condition.parse(condition)
        ref = _obj(obj)
        return self._one(
            ch.revoke_privileges, role, ref, list(privileges), cond, op="revoke_privilege", on=ref
        )

    def grant_role(self, role: str, to: Principal | str) -> ChangeResult:
        return self._one(ch.grant_role, role, _principal(to), op="grant_role", on=role)

    def revoke_role(self, role: str, to: Principal | str) -> ChangeResult:
        return self._one(ch.revoke_role, role, _principal(to), op="revoke_role", on=role)

    def grant_roles(self, roles: Iterable[str], to: Principal | str) -> ChangeResult:
        """Grant several roles to one user or group as one change (every role checked).

        One role after another would be wider on the way: granted a role with an ALLOW
        before the role with the DENY that overrides it, the principal holds the ALLOW
        alone until the next commit, and a sync in between pushes it."""
        return self._roles(ch.grant_role, "grant_role", roles, _principal(to))

    def revoke_roles(self, roles: Iterable[str], to: Principal | str) -> ChangeResult:
        """Revoke several roles from one user or group as one change (every role checked):
        revoked one by one, the role with the DENY could go before the role with the
        ALLOW it overrides."""
        return self._roles(ch.revoke_role, "revoke_role", roles, _principal(to))

    def _roles(
        self,
        fn: Callable[[Model, str, Principal], list[ev.Event]],
        op: str,
        roles: Iterable[str],
        to: Principal,
    ) -> ChangeResult:
        names = list(dict.fromkeys(roles))
        if not names:
            raise ModelError("no roles given")
        return self.change(
            lambda model: [event for role in names for event in fn(model, role, to)],
            operation=op,
            target=names[0],
            also=tuple((op, role) for role in names[1:]),
        )

    def set_owner(
        self, obj: ObjectLike, owner: str, kind: PrincipalKind | str = PrincipalKind.USER
    ) -> ChangeResult:
        """Set an object's owner. An owner's rights pass every DENY on the object and below,
        and those on its ancestors that reach it, so a checked actor hands over an object
        with a DENY on it, below or above only when he may
        revoke each (``revoke_privilege`` on its object) or revoke roles (``revoke_role``):
        else the new owner would pass a DENY the actor may not lift (the owner of a schema
        giving it to a user denied a table in it)."""
        k = kind if isinstance(kind, PrincipalKind) else PrincipalKind(kind.lower())
        ref = _obj(obj)

        def build(model: Model) -> list[ev.Event]:
            if ref.type is not SecurableType.ROLE:
                self._keep_denies(model, ref, "set_owner", OWNER_DENIES_STAY, roles_suffice=True, above=True)
            return ch.set_owner(model, ref, owner, k)

        return self.change(build, operation="set_owner", target=ref)

    def create_object(
        self, obj: ObjectLike, creator: str | None = None, properties: dict[str, str] | None = None
    ) -> ChangeResult:
        """Register an object; its creator becomes its owner (``creator``, else the acting
        user when it is in the model; a checked actor names none but himself)."""
        ref = _obj(obj)
        self._named_owner(creator, _object_operation("create", ref) or "create", str(ref))
        return self.change(
            lambda model: ch.create_object(
                model, ref, creator if creator is not None else self._author, properties
            ),
            operation=_object_operation("create", ref),
            target=ref,
        )

    def drop_object(self, obj: ObjectLike) -> ChangeResult:
        """Drop an object's registration and everything below it, with their grants.

        The server keeps the data a drop unregisters, and whoever may drop an object may
        register it again: a DENY on it or below is lifted by the drop, so a checked actor
        must also be allowed to revoke each (``revoke_privilege`` on its object), or
        nothing is dropped."""
        ref = _obj(obj)
        op = _object_operation("drop", ref)

        def build(model: Model) -> list[ev.Event]:
            self._keep_denies(model, ref, op or "drop")
            return ch.drop_object(model, ref)

        return self.change(build, operation=op, target=ref)

    def rename_object(self, obj: ObjectLike, new_name: str) -> ChangeResult:
        """Rename an object's registration; its grants follow the new name. The server's
        data keeps its name, which may be registered again: a DENY on it or below moves away
        from that data, so a checked actor must also be allowed to revoke each, as a drop."""
        ref = _obj(obj)
        op = _object_operation("alter", ref)

        def build(model: Model) -> list[ev.Event]:
            self._keep_denies(model, ref, op or "alter")
            return ch.rename_object(model, ref, new_name)

        return self.change(build, operation=op, target=ref)

    def _keep_denies(
        self,
        model: Model,
        ref: ObjectRef,
        op: str,
        rule: str = OBJECT_DENIES_STAY,
        roles_suffice: bool = False,
        above: bool = False,
    ) -> None:
        """Refuse a checked actor who may not revoke each DENY on ``ref`` or below (with
        ``above``, on its ancestors too, of a privilege an owner meets another way:
        :func:`owner_passes`; nor, with ``roles_suffice``,
        revoke roles: the roles holding them, from anyone)."""
        actor = self.actor
        if actor is None or actor.trusted:
            return
        denied = {g.object for _, g in model.grants_within(ref) if g.condition is Condition.DENY}
        if above:
            ancestors = set(ref.path[:-1])
            denied |= {
                g.object
                for grants in model.roles.values()
                for g in grants
                if g.condition is Condition.DENY and g.object in ancestors and g.privilege in owner_passes()
            }
        if not denied:
            return
        evaluator = Evaluator(self._decisions_on(model))
        if roles_suffice and may_revoke_roles(evaluator, actor.user):
            return
        for target in sorted(denied, key=str):
            if not evaluator.authorize(actor.user, "revoke_privilege", target, explain=False).allowed:
                raise Forbidden(actor.user, op, str(ref), rule)

    def set_service_admins(self, users: Iterable[str]) -> ChangeResult:
        return self._one(ch.set_service_admins, list(users))

    def load_model(self, target: Model) -> ChangeResult:
        """Make the stored model equal ``target`` (a loaded spec), as one change."""
        check_name("metalake", target.metalake)
        return self.change(lambda model: _converge_events(model, target), metalake=target.metalake)


#: The operation that creates, drops or alters an object of each type.
_OBJECT_OPERATIONS: dict[tuple[str, SecurableType], str] = {
    ("create", SecurableType.MODEL): "register_model",
    ("create", SecurableType.JOB_TEMPLATE): "register_job_template",
    ("drop", SecurableType.TAG): "delete_tag",
    ("drop", SecurableType.POLICY): "delete_policy",
    ("drop", SecurableType.JOB_TEMPLATE): "delete_job_template",
}


def _object_operation(verb: str, obj: ObjectRef) -> str | None:
    """The requirement-table row for ``verb`` on ``obj``'s type (None: no row, so only the
    administrator may)."""
    name = _OBJECT_OPERATIONS.get((verb, obj.type), f"{verb}_{obj.type.value}")
    return name if name in OPERATIONS else None


#: kept for callers of the old name: the one function is pushdown.model.directory.with_members
_with_members = with_members


def _principal(value: Principal | str) -> Principal:
    if isinstance(value, Principal):
        return value
    kind, _, name = value.partition(" ")
    if kind not in ("user", "group") or not name:
        raise ModelError(f"{value!r}: write 'user NAME' or 'group NAME'")
    return Principal.parse(value)
