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
from dataclasses import dataclass, field, replace

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
    #: where it applies, as the backend's ``cuts`` names areas (a database, say)
    area: str = ""


@dataclass(frozen=True)
class Ownership:
    obj: ObjectRef
    user: str
    shows: str = ""
    facts: frozenset[Fact] = frozenset()
    #: grants the owner needs for its ownership to compile to anything (the USE gates, on a
    #: backend that compiles them to nothing): tried with it only when it alone adds nothing,
    #: and then kept or left out together with it
    needs: Proposal | None = None


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
    #: a fact's parts, each held or not on its own (default: the fact itself); a backend
    #: whose fact is a bundle (a Ranger policy's items) splits it, so one item more is wider
    parts: Callable[[Fact], Iterable[Fact]] = lambda fact: (fact,)
    #: for a part that narrows (a deny item): the areas whose allows it may cut, when the
    #: import cannot keep it (allow proposals there are then refused: never wider)
    cuts: Callable[[Fact], frozenset[str]] = lambda part: frozenset()


@dataclass
class Adopted:
    model: Model
    report: list[str]
    #: held facts the model does not compile to: what an authoritative apply revokes
    revoked: frozenset[Fact]
    #: proposals and owners refused because, pushed back, they would grant more
    refused: list[str] = field(default_factory=list)
    #: what the spec's principals alone would grant that the server does not hold (an
    #: importer's error: the spec must not be used)
    wider: frozenset[Fact] = frozenset()


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
        if item.needs is not None:
            trial = _with(trial, item.needs)
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


def _split(estate: Estate, facts: Iterable[Fact]) -> frozenset[Fact]:
    return frozenset(part for fact in facts for part in estate.parts(fact))


def adopt(estate: Estate) -> Adopted:
    """The widest model whose compile the server already holds, built proposal by proposal;
    where a narrowing part (a deny item) cannot be kept, the allows it cuts are left out too."""
    barred: frozenset[str] = frozenset()
    while True:
        adopted, lost_cuts = _adopt(estate, barred)
        more = frozenset(area for part in lost_cuts for area in estate.cuts(part)) - barred
        if not more:
            return adopted
        barred |= more


def _adopt(estate: Estate, barred: frozenset[str]) -> tuple[Adopted, frozenset[Fact]]:
    model = _skeleton(estate)
    held = _split(estate, estate.held)
    now = _split(estate, estate.compile(model))
    refused: list[str] = []
    because: dict[Fact, str] = {}
    items: list[Proposal | Ownership] = [*estate.proposals, *estate.owners]
    for item in items:
        if isinstance(item, Proposal) and item.area in barred and item.condition is Condition.ALLOW:
            refused.append(f"not imported: {item.shows}: a deny item that cuts it cannot be imported")
            for fact in item.facts:
                because.setdefault(fact, "a deny item that cuts it cannot be imported (never wider)")
            continue
        if isinstance(item, Ownership) and item.obj in model.owners:
            kept = model.owners[item.obj]
            refused.append(f"not imported: {item.shows}: the model has one owner per object ({kept} is kept)")
            for fact in item.facts:
                because.setdefault(fact, f"the model's owner of {item.obj} is {kept} (one owner per object)")
            continue
        trial = _with(model, replace(item, needs=None) if isinstance(item, Ownership) else item)
        got = _split(estate, estate.compile(trial))
        if isinstance(item, Ownership) and item.needs is not None and got == now:
            trial = _with(model, item)  # alone it compiles to nothing: with the grants it needs
            got = _split(estate, estate.compile(trial))
        deny = isinstance(item, Proposal) and item.condition is Condition.DENY
        # a deny proposal may cut more than the server does (narrower, said in the report)
        extra = frozenset(p for p in got - held if not (deny and estate.cuts(p)))
        if extra:
            shown = ", ".join(sorted(estate.show(f) for f in extra)[:3])
            more = f" and {len(extra) - 3} more" if len(extra) > 3 else ""
            refused.append(f"not imported: {item.shows}: pushed back it would also grant {shown}{more}")
            for fact in item.facts:
                because.setdefault(fact, f"imported as {item.shows} it would also grant {shown}{more}")
            continue
        if got != now or deny:  # an allow that adds nothing (a wider one said it) is not kept
            model, now = trial, got
    lost = held - now
    revoked = frozenset(f for f in estate.held if not set(estate.parts(f)) <= now)
    lost_cuts = frozenset(part for part in lost if estate.cuts(part))
    wider = now - held  # the skeleton alone (no proposal adds any: checked above)
    report = [f"{estate.backend}: {len(held)} managed item(s) read, {len(held & now)} imported"]
    default = "no model privilege gives exactly this or less"
    for fact in sorted(revoked, key=estate.show):
        parts = set(estate.parts(fact))
        for part in [fact] if parts == {fact} else sorted(parts - now, key=estate.show):
            why = estate.why.get(part) or because.get(part) or default
            if estate.cuts(part):
                why += (
                    "; WIDER once revoked: what other hands allow there is no longer cut by it "
                    '(keep adopt = "additive" until it is moved out of pushdown\'s fence)'
                )
            report.append(f"left out (an authoritative apply revokes it): {estate.show(part)}: {why}")
    report += [f"left out (outside the fence; no sync changes it): {line}" for line in estate.outside]
    report += [f"finding (no sync changes it): {line}" for line in estate.findings]
    report += refused
    for part in sorted(wider, key=estate.show):
        if estate.cuts(part):
            report.append(f"narrower (an authoritative apply adds it): {estate.show(part)}")
        else:
            report.append(f"error: the spec's principals alone would grant {estate.show(part)}")
    widening = frozenset(p for p in wider if not estate.cuts(p))
    return Adopted(model, report, revoked, refused, widening), lost_cuts


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
