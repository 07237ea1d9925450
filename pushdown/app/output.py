"""What the command line prints about names: escaped, and with warnings for look-alikes.

A name read back from a server may still hold a newline or a bidirectional override;
every plan, error and trace goes through :func:`shown_plan` or :func:`escaped_lines`,
so one operation is always one line and nothing hidden reorders what a reviewer reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from pushdown.model.state import Model
from pushdown.model.text import escaped, invisible, lookalike
from pushdown.reconcile.plan import Fact, Op, Plan
from pushdown.reconcile.scope import Scope


@dataclass(frozen=True)
class _Shown:
    """A fact whose ``str()`` is escaped (for display only)."""

    fact: Fact

    def in_scope(self, scope: Scope) -> bool:
        return self.fact.in_scope(scope)

    def __str__(self) -> str:
        return escaped(str(self.fact))


def escaped_lines(text: str) -> str:
    return "\n".join(escaped(line) for line in text.split("\n"))


def shown_plan(plan: Plan) -> str:
    """``plan.render()`` with every operation and note on one line, names escaped."""
    ops = tuple(Op(op.action, _Shown(op.fact)) for op in plan.ops)
    return escaped_lines(replace(plan, ops=ops, notes=tuple(escaped(n) for n in plan.notes)).render())


def _names(model: Model) -> Iterator[tuple[str, str]]:
    yield "metalake", model.metalake
    yield from (("user", u) for u in sorted(model.users))
    yield from (("group", g) for g in sorted(model.groups))
    yield from (("role", r) for r in sorted(model.roles))
    for obj in sorted(model.objects, key=lambda o: (len(o.names), o.type.value, o.names)):
        if obj.names and lookalike(obj.names[-1]):  # each part is checked where it is the last
            yield obj.type.label, obj.name


def model_warnings(model: Model) -> list[str]:
    """One warning per name that may be mistaken for another."""
    out = []
    for kind, name in _names(model):
        why = lookalike(name)
        if why is not None:
            out.append(f"warning: {kind} {escaped(name)} holds {why}; it may be mistaken for another name")
    return out


def plan_warnings(plan: Plan) -> list[str]:
    """One warning per operation whose text holds hidden characters (shown escaped)."""
    out = []
    for op in plan.ops:
        why = invisible(str(op.fact))
        if why is not None:
            out.append(f"warning: backend {plan.backend}: {escaped(str(op))} holds {why}")
    return out
