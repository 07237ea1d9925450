"""The matrix (chosen cells, each one check), explain (a decision's trace as a tree) and
the backends (status and the pending plan)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pushdown.app.page.reader import HIDDEN_ROLE, MAX_CELLS, OPS_BY_TYPE, Hidden, Reader
from pushdown.app.service import status as backend_status
from pushdown.decide.evaluator import Decision, Target, operation_named
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ModelError, PushdownError
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.plan import Plan

# -- the matrix -------------------------------------------------------------------------


@dataclass
class Matrix:
    principals: list[str]
    objects: list[str]
    operations: list[str]
    #: (principal, object, operation) -> (allowed, reason)
    cells: dict[tuple[str, str, str], tuple[bool, str]]
    hidden: list[str]
    seconds: float


def matrix(reader: Reader, users: Sequence[str], objects: Sequence[str], operations: Sequence[str]) -> Matrix:
    """The cells asked for, each one check of the evaluator (as the API decides one call)."""
    model = reader.model
    shown_users, hidden = [], []
    for u in dict.fromkeys(u.strip() for u in users if u.strip()):
        try:
            shown_users.append(reader.user(u))
        except Hidden:
            hidden.append(u)
    refs: list[ObjectRef] = []
    for o in dict.fromkeys(o.strip() for o in objects if o.strip()):
        try:
            refs.append(reader.obj(o))
        except Hidden:
            hidden.append(o)
    wanted = [op.strip() for op in operations if op.strip() in OPERATIONS]
    cells: dict[tuple[str, str, str], tuple[bool, str]] = {}
    started = time.perf_counter()
    budget = MAX_CELLS
    for u in shown_users:
        for ref in refs:
            ops = [
                op for op in (wanted or OPS_BY_TYPE.get(ref.type, ())) if OPERATIONS[op].target is ref.type
            ]
            for op in ops:
                if budget <= 0:
                    break
                budget -= 1
                d = shown(reader, reader.evaluator.authorize(u, op, ref), ref)
                cells[(u, str(ref), op)] = (d.allowed, _why(d))
    seconds = time.perf_counter() - started
    del model
    ops_shown = sorted({k[2] for k in cells}, key=lambda o: list(OPERATIONS).index(o))
    return Matrix(shown_users, [str(r) for r in refs], ops_shown, cells, hidden, seconds)


def _why(decision: Decision) -> str:
    """The decisive lines of a trace, in one line (the cell's hover text)."""
    lines = [
        s.text for s in decision.trace if s.ok == decision.allowed and s.text not in ("all of:", "any of:")
    ]
    return "; ".join(lines[:4]) or ("allowed" if decision.allowed else "not allowed")


# -- explain ----------------------------------------------------------------------------


@dataclass
class Node:
    ok: bool
    text: str
    children: list[Node] = field(default_factory=list)


def explain(reader: Reader, user: str, operation: str, target: str) -> tuple[Decision, list[Node]]:
    """``pushdown explain``'s decision, its trace as a tree (each step under the one above it).

    Whatever the operation, its target must be one the caller may see (an object he may
    load, a user, group or role REST shows him), else the answer is a missing one's; the
    trace names no principal or role the caller may not see (:func:`shown`)."""
    reader.user(user)
    try:
        op = operation_named(operation)
    except ModelError:
        raise Hidden(operation) from None
    if op.other is not None:  # a second object (a tag, a policy) the page does not ask for
        raise Hidden(operation)
    resolved = reader.target(op, target)
    try:
        decision = reader.evaluator.authorize(user, op.name, resolved)
    except (ModelError, PushdownError):
        raise Hidden(target) from None
    decision = shown(reader, decision, resolved)
    return decision, tree(decision)


def shown(reader: Reader, decision: Decision, target: Target) -> Decision:
    """The decision with every name the caller may not see (REST's rules, :class:`Reader`)
    replaced in its trace: a role (or the group it is held through) of the user decided
    for, and the owner of a node on the target's path. The user and the target are the
    caller's to see already."""
    key = ("trace", decision.user, target)
    found = reader.memo.get(key)
    if found is None:
        found = reader.memo[key] = _hidden_words(reader, decision.user, target)
    if found is _NOTHING:
        return decision
    pattern, words = found
    trace = tuple(replace(s, text=pattern.sub(lambda m: words[m.group(0)], s.text)) for s in decision.trace)
    return replace(decision, trace=trace)


def _hidden_words(reader: Reader, user: str, target: Target) -> tuple[re.Pattern[str], dict[str, str]]:
    """What :func:`shown` replaces for ``user`` and ``target``, and a pattern finding it
    (each phrase starting a line, a parenthesis or a ``;``-separated part)."""
    words: dict[str, str] = {}
    for role, how in reader.model.roles_of(user).items():
        phrase = f"by role {role} (held {how})"
        named, held = reader.role_words(role), reader.held_words(how)
        if named == HIDDEN_ROLE:
            words[phrase] = f"by {HIDDEN_ROLE}"
        elif held != how:
            words[phrase] = f"by {named} (held {held})"
    if isinstance(target, ObjectRef):
        for node in target.path:
            owner = reader.model.owners.get(node)
            if owner is not None and not reader.sees_owner(owner, node):
                words[f"{owner} owns {node}"] = f"a user you may not see owns {node}"
    if not words:
        return _NOTHING
    alternatives = "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
    return re.compile(rf"(?<![^\s(;])(?:{alternatives})"), words


_NOTHING: tuple[re.Pattern[str], dict[str, str]] = (re.compile("(?!)"), {})


def tree(decision: Decision) -> list[Node]:
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    for step in decision.trace:
        node = Node(step.ok, step.text)
        while stack and stack[-1][0] >= step.depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((step.depth, node))
    return roots


# -- backends ---------------------------------------------------------------------------


def plan_words(plan: Plan) -> str:
    return plan.render()


def backends_view(reader: Reader, with_plan: bool) -> list[dict[str, Any]]:
    """Each backend's status (``pushdown status``) and, asked for, its pending plan (``plan --pending``)."""
    if not reader.admin:
        return []
    ac = reader.ac
    out = []
    plans: dict[str, Any] = {}  # backend -> its SyncResult
    if with_plan:
        for done in ac.sync(full=False, dry_run=True):
            plans[done.backend] = done
    model = reader.model
    for st in backend_status.statuses(ac.store, ac.backends):
        backend = ac.backends.get(st.backend)
        catalogs = sorted(backend.enforces(model)) if backend is not None else []
        row: dict[str, Any] = {
            "name": st.backend,
            "catalogs": catalogs,
            "cursor": st.cursor,
            "lag_events": st.lag_events,
            "lag_seconds": st.lag_seconds,
            "last_success": backend_status.when(st.last_success),
            "last_error": st.last_error,
            "findings": st.findings,
            "failing": st.failing,
        }
        result: Any = plans.get(st.backend)
        if result is not None:
            if result.error is not None:
                row["plan"] = f"ERROR {result.error}"
            elif result.plan is None or not result.plan.drift:
                row["plan"] = "nothing to do"
            else:
                row["plan"] = plan_words(result.plan)
            if result.plan is not None:
                row["notes"] = list(result.plan.notes)
                row["finding_lines"] = list(result.plan.findings)
        out.append(row)
    return out
