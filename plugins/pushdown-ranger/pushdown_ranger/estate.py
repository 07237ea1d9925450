"""What a Ranger Admin holds, in the model's terms (``pushdown import --backend``).

Read by the backend's own sync reader, within its fence: the roles named with its
``role_prefix`` and, in the Hive service's policies, the plain items naming them. A role
``<role_prefix>R`` is model role ``R`` with its users; its items are read through the
access mapping (:mod:`pushdown_ranger.mapping`) in reverse: ``select`` on
``database=d, table=?*`` or ``table=t`` (``column=*``) proposes SELECT_TABLE on the schema
or table, ``select, update, alter`` MODIFY_TABLE, ``create`` on ``database=d`` CREATE_TABLE,
a deny item the same model privileges denied (each with the USE gates). A policy is one
fact of many items, so each item is held or not on its own (:attr:`Estate.parts`); a deny
item the import cannot keep leaves out every allow of the role it cuts (never wider).

A role's member is a model user only through the mapping the sync uses, inverted
(:func:`pushdown.reconcile.identity.inverse`, names compared as the compile compares them:
Ranger names equal but for case are one, and a name Ranger would read as a wildcard or
macro is no user's): the model user (of the configured store's, or Ranger's own member
names) that ``pushdown_map_principal`` maps to exactly that name. A member no model user
maps to, or that two map to (the sync gives such a shared name only what all of them are
allowed), is imported as nobody: the membership is left out with the reason. Groups are
never imported: pushdown's roles hold users only (a model group is expanded).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pushdown.errors import ConfigError, ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.estate import Estate, Proposal
from pushdown.reconcile.identity import inverse
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Scope
from pushdown_ranger.compile.principals import _inexact
from pushdown_ranger.facts import PolicyFact, RoleFact
from pushdown_ranger.readback import hand_modified

if TYPE_CHECKING:
    from pushdown_ranger.backend import RangerBackend

#: model privilege -> the Hive accesses it compiles to on a table (all of them needed)
_REVERSE = (
    ("MODIFY_TABLE", frozenset({"select", "update", "alter"})),
    ("SELECT_TABLE", frozenset({"select"})),
)
_EVERY_TABLE = ("?*",)
#: what the core says a sync does with a name several users map to, and what Ranger's does
_WITHHELD = "a sync withholds their grants"
_SHARED = (
    "a sync gives that Ranger user only what all of them are allowed (nothing where the names "
    "differ in case), so it stands for none of them"
)
#: a deny item's access -> the model privilege denied for it (a model DENY of MODIFY_TABLE
#: also denies reading: the compile check keeps it only where that is held or narrower)
_DENIES = (("select", "SELECT_TABLE"), ("update", "MODIFY_TABLE"), ("alter", "MODIFY_TABLE"))


def parts(fact: Fact) -> Iterable[Fact]:
    """A policy's items one by one; a role's name and each member one by one."""
    if isinstance(fact, PolicyFact):
        yield from (PolicyFact(fact.service, fact.resources, allow=frozenset({p})) for p in fact.allow)
        yield from (PolicyFact(fact.service, fact.resources, deny=frozenset({p})) for p in fact.deny)
    elif isinstance(fact, RoleFact):
        yield RoleFact(fact.name)
        yield from (RoleFact(fact.name, users=frozenset({u})) for u in fact.users)
        yield from (RoleFact(fact.name, groups=frozenset({g})) for g in fact.groups)
        yield from (RoleFact(fact.name, roles=frozenset({r})) for r in fact.roles)
        yield from (RoleFact(fact.name, admins=frozenset({a})) for a in fact.admins)
    else:
        yield fact


def read_estate(backend: RangerBackend, model: Model) -> Estate:
    catalogs = sorted(backend.enforces(model))
    if len(catalogs) != 1:
        raise ConfigError(
            f"backend {backend.name}: import reads the Hive service into one catalog, but "
            f'{len(catalogs)} name it; name one (catalogs = ["..."] in its configuration)'
        )
    catalog = catalogs[0]
    base = Model()
    for event in ch.create_object(
        base, ObjectRef.of("catalog", (catalog,)), properties={"backend": backend.name}
    ):
        base.apply(event)
    snapshot = backend.read(base, Scope.everything().resolve(base))

    def compile_(m: Model) -> frozenset[Fact]:
        return frozenset(backend.compile(m, snapshot, Scope.everything().resolve(m)).facts)

    naming = backend.naming
    prefix = naming.role_prefix

    def model_role(name: str) -> str | None:
        return name[len(prefix) :] if name.startswith(prefix) and len(name) > len(prefix) else None

    inert: set[Fact] = set()  # items of disabled policies: they cut nothing now

    def cuts(part: Fact) -> frozenset[str]:
        if isinstance(part, PolicyFact) and part.deny and part not in inert:
            dbs = [v for k, v, _ in part.resources if k == "database"]
            return frozenset(f"{part.service}:database={'|'.join(v)}" for v in dbs) or frozenset(
                {part.service}
            )
        return frozenset()

    estate = Estate(
        backend.name,
        frozenset(snapshot.facts),
        compile_,
        catalogs={catalog: {"backend": backend.name}},
        findings=snapshot.findings,
        parts=parts,
        cuts=cuts,
    )
    members = {u for f in snapshot.facts if isinstance(f, RoleFact) and model_role(f.name) for u in f.users}
    who = inverse(
        model.users,
        members,
        naming.user,
        caseless=True,
        unusable=_inexact,
        describe=lambda n: f"Ranger user {n!r}",
    )
    for fact in snapshot.facts:
        if isinstance(fact, RoleFact):
            _role(estate, fact, model_role(fact.name), naming.user_role_prefix, who)
    policies = {k: p for k, p in snapshot.policies.items() if k[0] == naming.hive_service}
    for fact in sorted((f for f in snapshot.facts if isinstance(f, PolicyFact)), key=str):
        policy = policies.get((fact.service, fact.resources))
        _policy(estate, catalog, fact, policy, model_role, naming.hive_service, prefix)
        if policy is not None and policy.get("isEnabled") is False:
            inert.update(parts(fact))
    estate.outside += _outside(snapshot.policies.values(), naming.ours)
    return estate


def _role(
    estate: Estate,
    fact: RoleFact,
    role: str | None,
    user_prefix: str,
    who: dict[str, tuple[str | None, str]],
) -> None:
    users: set[str] = set()
    for part in parts(fact):
        assert isinstance(part, RoleFact)
        if role is None:
            estate.why[part] = (
                f"a per-user role ({user_prefix}…): the model grants through its roles, and pushdown "
                "writes a per-user role only for what no model role says exactly"
            )
        elif part.groups:
            estate.why[part] = "a group member: pushdown's roles hold users only (a model group is expanded)"
        elif part.roles:
            estate.why[part] = "a nested role: pushdown's roles hold users only"
        elif part.admins:
            estate.why[part] = "an admin member: the model manages grants through ownership and MANAGE_GRANTS"
        elif part.users:
            (name,) = part.users
            user, why = who[name]
            if user is not None:  # a name of Ranger's own the model refuses (a control character)
                try:
                    ch.check_principal_name("user", user)
                except ModelError as exc:
                    user, why = None, f"Ranger user {name!r} is no model user name ({exc})"
            if user is None:
                estate.why[part] = why.replace(_WITHHELD, _SHARED)
            else:
                users.add(user)
    if role is not None:
        estate.roles.setdefault(role, set()).update(Principal.user(u) for u in users)
        estate.users |= users


def _policy(
    estate: Estate,
    catalog: str,
    fact: PolicyFact,
    policy: dict[str, Any] | None,
    model_role: Any,
    hive: str,
    prefix: str,
) -> None:
    shape = _shape(fact, catalog) if fact.service == hive else None
    flag = _flagged(policy)
    by_role: dict[tuple[str, bool], set[str]] = defaultdict(set)
    for deny, pairs in ((False, fact.allow), (True, fact.deny)):
        for name, access in pairs:
            part = PolicyFact(
                fact.service, fact.resources, **{"deny" if deny else "allow": frozenset({(name, access)})}
            )
            role = model_role(name)
            if hand_modified(access):
                estate.why[part] = (
                    "an item with conditions or delegated admin (made by hand): the model has no such "
                    "grant, and a sync takes pushdown's roles out of it (of a deny item: its delegated admin)"
                )
            elif shape is None:
                estate.why[part] = "a resource the import does not read (only Hive databases and tables)"
            elif flag:
                estate.why[part] = flag
            elif role is None:
                estate.why[part] = "an item of a per-user role: the model grants through its roles"
            else:
                by_role[(role, deny)].add(access)
    if shape is None or flag:
        return
    target, schema = shape
    area = f"{fact.service}:database={schema.names[1]}"
    gates = ((ObjectRef.of("catalog", (catalog,)), ("USE_CATALOG",)), (schema, ("USE_SCHEMA",)))
    for (role, deny), accesses in sorted(by_role.items(), key=lambda kv: (not kv[0][1], kv[0])):
        condition = Condition.DENY if deny else Condition.ALLOW
        pairs = frozenset((prefix + role, a) for a in accesses)
        source = frozenset(
            PolicyFact(fact.service, fact.resources, **{"deny" if deny else "allow": frozenset({p})})
            for p in pairs
        )
        word = "deny" if deny else "allow"
        where = fact.describe_resources()
        grants: tuple[tuple[ObjectRef, tuple[str, ...]], ...]
        if target.type.value == "schema" and not any(k == "table" for k, _, _ in fact.resources):
            if "create" in accesses:
                grants = ((schema, ("CREATE_TABLE",)),) if deny else (*gates, (schema, ("CREATE_TABLE",)))
                shows = f"{'DENY ' if deny else ''}CREATE_TABLE for {word} create on {where} of role {role}"
                estate.proposals.append(
                    Proposal(role, grants, condition, shows=shows, facts=source, area=area)
                )
            continue
        if deny:
            denied = sorted({p for a, p in _DENIES if a in accesses})
            if denied:
                grants = ((target, tuple(denied)),)
                listed = ", ".join(sorted(accesses))
                shows = f"DENY {', '.join(denied)} for deny {listed} on {where} of role {role}"
                estate.proposals.append(
                    Proposal(role, grants, condition, shows=shows, facts=source, area=area)
                )
            continue
        for model_privilege, needs in _REVERSE:
            if needs <= accesses:
                grants = (*gates, (target, (model_privilege,)))
                shows = f"{model_privilege} for allow {', '.join(sorted(needs))} on {where} of role {role}"
                estate.proposals.append(
                    Proposal(role, grants, condition, shows=shows, facts=source, area=area)
                )


def _shape(fact: PolicyFact, catalog: str) -> tuple[ObjectRef, ObjectRef] | None:
    """The model object of a Hive resource set pushdown writes: ``database=d`` (the schema),
    ``database=d, table=?*, column=*`` (every table: the schema) or ``table=t`` (the table)."""
    res = {k: (v, r) for k, v, r in fact.resources}
    if set(res) - {"database", "table", "column"} or any(r for _, r in res.values()):
        return None
    dbs = res.get("database", ((), False))[0]
    if len(dbs) != 1 or not _exact(dbs[0]):
        return None
    schema = ObjectRef.of("schema", (catalog, dbs[0]))
    if "table" not in res:
        return (schema, schema) if "column" not in res else None
    if res.get("column", ((), False))[0] != ("*",):
        return None
    tables = res["table"][0]
    if tables == _EVERY_TABLE:
        return schema, schema
    if len(tables) != 1 or not _exact(tables[0]):
        return None
    return ObjectRef.of("table", (catalog, dbs[0], tables[0])), schema


def _exact(name: str) -> bool:
    return bool(name) and not set(name) & set("*?{}\\\\")


def _flagged(policy: dict[str, Any] | None) -> str | None:
    """Why a policy's items say more or less than the model could (``None``: plain)."""
    if policy is None:
        return "a policy the import could not find again"
    if policy.get("isEnabled") is False:
        return "a disabled policy: importing its items would enable them"
    if policy.get("validitySchedules"):
        return "a validity schedule: the model's grants do not expire"
    if policy.get("isDenyAllElse"):
        return "deny-all-else: the model has no such policy"
    if policy.get("policyPriority"):
        return "an override-priority policy: the model has no priorities"
    return None


def _outside(policies: Iterable[dict[str, Any]], ours: Any) -> list[str]:
    """Items naming pushdown's roles that the import does not read: deny items and exceptions
    with conditions or delegated admin, which no sync takes a role out of (a sync clears only
    the delegated admin of a deny item naming nobody but pushdown's roles; an allow item with
    them is read as marked pairs, which a sync takes out; masks and row filters are other
    policy types, never read as facts)."""
    out = []
    for policy in policies:
        for field in ("denyPolicyItems", "allowExceptions", "denyExceptions"):
            for item in policy.get(field) or ():
                named = [r for r in item.get("roles") or () if ours(r)]
                if named and (item.get("conditions") or item.get("delegateAdmin")):
                    what = "conditions" if item.get("conditions") else "delegated admin"
                    out.append(f"policy {policy.get('name')!r}: an item of {', '.join(named)} with {what}")
    return out
