"""What a live backend holds, brought into the model: never wider, every omission reported.

A backend that can be imported from answers :meth:`~pushdown.reconcile.backend.Backend.estate`
with an :class:`Estate`: the managed facts its sync reader saw (``held``), its principals,
and *proposals* (model grants, each standing for some of the server's items, found by the
backend's own privilege mapping read in reverse), with its own compile as ``compile``.

:func:`adopt` keeps a proposal only when the backend's compile of the model with it gives
nothing the server does not hold (``compile(model) <= held``): pushed back, the imported
model never grants what the server did not. Every held fact the final model does not
compile to is reported, with the backend's reason: an authoritative apply of the spec
revokes exactly those; an ``additive`` one (backend setting ``adopt = "additive"``) keeps
them, each shown as a finding of the plan.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.plan import Fact


@dataclass(frozen=True)
class Proposal:
    """Model grants (``role`` gets ``privileges`` on each object) standing for server items."""

    role: str
    grants: tuple[tuple[ObjectRef, tuple[str, ...]], ...]
    condition: Condition = Condition.ALLOW
    #: what on the server it stands for, as the report shows it
    shows: str = ""
    #: who gets ``role`` when the proposal creates it (a principal's own grants role)
    to: tuple[Principal, ...] = ()
    #: the held facts it stands for (a refusal is their reason when they are left out)
    facts: frozenset[Fact] = frozenset()


@dataclass(frozen=True)
class Ownership:
    obj: ObjectRef
    user: str
    shows: str = ""
    facts: frozenset[Fact] = frozenset()


@dataclass
class Estate:
    """A backend's holdings in the model's terms, before the never-wider check."""

    backend: str
    #: the managed facts the backend's reader saw: what an authoritative sync governs
    held: frozenset[Fact]
    #: the backend's compile of a model: the facts a sync would want
    compile: Callable[[Model], frozenset[Fact]]
    users: set[str] = field(default_factory=set)
    groups: dict[str, set[str]] = field(default_factory=dict)
    #: role -> the users and groups holding it
    roles: dict[str, set[Principal]] = field(default_factory=dict)
    #: catalog name -> its properties (``backend``: which backend enforces it)
    catalogs: dict[str, dict[str, str]] = field(default_factory=dict)
    objects: list[ObjectRef] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    owners: list[Ownership] = field(default_factory=list)
    #: held fact -> why the model cannot say it (shown when it is left out)
    why: dict[Fact, str] = field(default_factory=dict)
    #: what the backend holds outside its fence: not imported, and no sync changes it
    outside: list[str] = field(default_factory=list)
    #: the read's findings (access paths no sync changes)
    findings: tuple[str, ...] = ()
    show: Callable[[Fact], str] = str


@dataclass
class Adopted:
    model: Model
    report: list[str]
    #: held facts the model does not compile to: what an authoritative apply revokes
    revoked: frozenset[Fact]
    #: proposals and owners refused because, pushed back, they would grant more
    refused: list[str] = field(default_factory=list)


def _do(model: Model, events: Iterable[Event]) -> None:
    for event in events:
        model.apply(event)


def _register(model: Model, obj: ObjectRef) -> None:
    for node in obj.path:
        if node.type is not SecurableType.METALAKE and node not in model.objects:
            _do(model, ch.create_object(model, node))


def _skeleton(estate: Estate) -> Model:
    model = Model()
    for name, props in sorted(estate.catalogs.items()):
        _do(model, ch.create_object(model, ObjectRef.of("catalog", (name,)), properties=dict(props)))
    for user in sorted(estate.users):
        _do(model, ch.add_user(model, user))
    for group, members in sorted(estate.groups.items()):
        for user in sorted(members - model.users):
            _do(model, ch.add_user(model, user))
        _do(model, ch.add_group(model, group, sorted(members)))
    for role, holders in sorted(estate.roles.items()):
        _do(model, ch.create_role(model, role))
        for holder in sorted(holders):
            if not model.principal_exists(holder):
                is_user = holder.kind is PrincipalKind.USER
                _do(model, ch.add_user(model, holder.name) if is_user else ch.add_group(model, holder.name))
            _do(model, ch.grant_role(model, role, holder))
    for obj in estate.objects:
        _register(model, obj)
    return model


def _with(model: Model, item: Proposal | Ownership) -> Model:
    trial = copy.deepcopy(model)
    if isinstance(item, Ownership):
        _register(trial, item.obj)
        if item.user not in trial.users:
            _do(trial, ch.add_user(trial, item.user))
        _do(trial, ch.set_owner(trial, item.obj, item.user))
        return trial
    if item.role not in trial.roles:
        _do(trial, ch.create_role(trial, item.role))
        for holder in item.to:
            _do(trial, ch.grant_role(trial, item.role, holder))
    for obj, privileges in item.grants:
        _register(trial, obj)
        _do(trial, ch.grant_privileges(trial, item.role, obj, privileges, item.condition))
    return trial


def adopt(estate: Estate) -> Adopted:
    """The widest model whose compile the server already holds, built proposal by proposal."""
    model = _skeleton(estate)
    now = estate.compile(model)
    refused: list[str] = []
    because: dict[Fact, str] = {}
    items: list[Proposal | Ownership] = [*estate.proposals, *estate.owners]
    for item in items:
        trial = _with(model, item)
        got = estate.compile(trial)
        extra = got - estate.held
        if extra:
            shown = ", ".join(sorted(estate.show(f) for f in extra)[:3])
            more = f" and {len(extra) - 3} more" if len(extra) > 3 else ""
            refused.append(f"not imported: {item.shows}: pushed back it would also grant {shown}{more}")
            for fact in item.facts:
                because.setdefault(fact, f"imported as {item.shows} it would also grant {shown}{more}")
            continue
        if got != now:  # one that adds nothing (said already by a wider one) is not kept
            model, now = trial, got
    revoked = frozenset(estate.held - now)
    wider = now - estate.held  # the skeleton alone (no proposal adds any: checked above)
    kept = len(estate.held) - len(revoked)
    report = [f"{estate.backend}: {len(estate.held)} managed item(s) read, {kept} imported"]
    for fact in sorted(revoked, key=estate.show):
        why = estate.why.get(fact) or because.get(fact) or "no model privilege gives exactly this or less"
        report.append(f"left out (an authoritative apply revokes it): {estate.show(fact)}: {why}")
    report += [f"left out (outside the fence; no sync changes it): {line}" for line in estate.outside]
    report += [f"finding (no sync changes it): {line}" for line in estate.findings]
    report += refused
    report += [
        f"error: the spec's principals alone would grant {estate.show(f)}"
        for f in sorted(wider, key=estate.show)
    ]
    return Adopted(model, report, revoked, refused)


def grants_role(name: str, taken: Iterable[str] = ()) -> str:
    """The role holding a principal's own grants (as ``pushdown import --dialect`` names it)."""
    role = f"grants_of_{name}"
    used = set(taken)
    while role in used:
        role += "_"
    return role


def estate_yaml(adopted: Adopted, source: str) -> str:
    """The imported model as a spec (today's format), its report as comments on top."""
    import yaml

    from pushdown.dialects.spec_text import spec_of

    spec = spec_of(adopted.model)
    for name, body in spec.get("catalogs", {}).items():
        backend = adopted.model.objects.get(ObjectRef.of("catalog", (name,)), {}).get("backend")
        if backend:
            spec["catalogs"][name] = {"backend": backend, **body}
    head = [f"# imported from {source}"] + [f"# {line}" for line in adopted.report]
    body = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(head) + "\n" + body
