"""What the command line prints: plans, errors and traces with names escaped, warnings
for look-alike names, a progress bar for long applies.

A name read back from a server may still hold a newline or a bidirectional override;
every plan, error and trace goes through :func:`shown_plan` or :func:`escaped_lines`,
so one operation is always one line and nothing hidden reorders what a reviewer reads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import click

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.model.text import escaped, invisible, lookalike
from pushdown.reconcile.plan import Fact, Op, Plan
from pushdown.reconcile.sync import SyncResult

PROGRESS_MIN_OPS = 100


@dataclass(frozen=True)
class _Shown:
    """A fact whose ``str()`` is escaped (for display only)."""

    fact: Fact

    @property
    def key(self) -> object:
        return self.fact.key

    def to_json(self) -> dict[str, Any]:
        return self.fact.to_json()

    def __str__(self) -> str:
        return escaped(str(self.fact))


def escaped_lines(text: str) -> str:
    return "\n".join(escaped(line) for line in text.split("\n"))


def shown_plan(plan: Plan) -> str:
    """``plan.render()`` with every operation and note on one line, names escaped."""
    ops = tuple(Op(op.action, _shown(op.before), _shown(op.after), op.phase) for op in plan.ops)
    notes = tuple(escaped(n) for n in plan.notes)
    findings = tuple(escaped(f) for f in plan.findings)
    return escaped_lines(replace(plan, ops=ops, notes=notes, findings=findings).render())


def _shown(fact: Fact | None) -> Fact | None:
    return None if fact is None else _Shown(fact)


def _names(model: Model) -> Iterator[tuple[str, str]]:
    yield "metalake", model.metalake
    yield from (("user", u) for u in sorted(model.users))
    yield from (("group", g) for g in sorted(model.groups))
    yield from (("role", r) for r in sorted(model.roles))
    for obj in sorted(model.objects, key=lambda o: (len(o.names), o.type.value, o.names)):
        if obj.names and lookalike(obj.names[-1]):  # each part is checked where it is the last
            yield obj.type.label, obj.name


def model_warnings(model: Model) -> list[str]:
    """One warning per name that may be mistaken for another, and one per grant on an
    object the model does not register."""
    out = []
    for kind, name in _names(model):
        why = lookalike(name)
        if why is not None:
            out.append(f"warning: {kind} {escaped(name)} holds {why}; it may be mistaken for another name")
    return out + unregistered_warnings(model)


def _registered(model: Model, obj: ObjectRef) -> bool:
    if obj.type is SecurableType.ROLE:
        return obj.names[0] in model.roles
    return not obj.names or obj in model.objects


def unregistered_warnings(model: Model) -> list[str]:
    """Grants on objects nobody registered. The model keeps them (a DENY written before its
    table exists is how a team closes a table ahead of time), and every backend enforces
    them on whatever its server holds under that name, the moment it appears; but a typo
    looks the same, so the spec's author is told."""
    out = []
    for role in sorted(model.roles):
        for grant in sorted(model.roles[role], key=str):
            if not _registered(model, grant.object):
                out.append(
                    f"warning: role {escaped(role)}: {escaped(str(grant))}, which is not registered; "
                    "backends enforce it on whatever their servers hold under that name"
                )
    return out


def plan_warnings(plan: Plan) -> list[str]:
    """One warning per operation whose text holds hidden characters (shown escaped)."""
    out = []
    for op in plan.ops:
        why = invisible(str(op.fact))
        if why is not None:
            out.append(f"warning: backend {plan.backend}: {escaped(str(op))} holds {why}")
    return out


def report(results: list[SyncResult]) -> tuple[int, int]:
    """Print each backend's plan or error; return (backends with drift, backends failed)."""
    drift = failed = 0
    for result in results:
        if result.error is not None:
            failed += 1
            click.echo(f"backend {result.backend}: ERROR {escaped_lines(result.error)}", err=True)
        elif result.plan is not None:
            show(result.plan)
            drift += result.plan.drift
        else:
            click.echo(f"backend {result.backend}: nothing pending")
    return drift, failed


def show(plan: Plan) -> None:
    for warning in plan_warnings(plan):
        click.echo(warning, err=True)
    click.echo(shown_plan(plan))


def progress_bar(name: str, total: int) -> Callable[[int], None]:
    """A progress bar on stderr for long applies; silent for short ones."""
    if total < PROGRESS_MIN_OPS:
        return lambda n: None
    bar: Any = click.progressbar(length=total, label=f"applying to {name}", file=sys.stderr)
    bar.__enter__()
    done = [0]

    def tick(n: int) -> None:
        bar.update(n)
        done[0] += n
        if done[0] >= total:
            bar.__exit__(None, None, None)

    return tick
