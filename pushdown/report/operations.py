"""Which operations the report covers: the compilable ones (listings aside), and by
default one per distinct requirement."""

from __future__ import annotations

from collections.abc import Iterable

from pushdown.decide.decider import compilable
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ModelError, PushdownError


def _reportable(name: str) -> bool:
    op = OPERATIONS[name]
    if op.lists is not None:  # a listing is allowed exactly where loading its container is
        return False
    try:
        compilable(name)
    except ModelError:
        return False
    return True


#: Every operation the report can cover: the compilable ones, listings aside.
REPORTED: tuple[str, ...] = tuple(name for name in OPERATIONS if _reportable(name))


def _distinct(names: Iterable[str]) -> tuple[str, ...]:
    """The first operation of each (target, requirement): update_table_statistics is
    allowed exactly where alter_table is, load_model_version where load_model is."""
    seen: dict[object, str] = {}
    for name in names:
        op = OPERATIONS[name]
        seen.setdefault((op.target, op.requires), name)
    return tuple(seen.values())


#: The operations reported by default: :data:`REPORTED` without repeated requirements.
DEFAULT: tuple[str, ...] = _distinct(REPORTED)


def report_operations(names: Iterable[str] | None = None) -> tuple[str, ...]:
    """The operations asked for (:data:`DEFAULT` when none), checked against :data:`REPORTED`."""
    if names is None:
        return DEFAULT
    chosen = tuple(dict.fromkeys(n.strip().lower() for n in names if n.strip()))
    bad = [n for n in chosen if n not in REPORTED]
    if bad or not chosen:
        raise PushdownError(
            f"not a reported operation: {', '.join(bad) or '(none given)'}; "
            f"the report covers: {', '.join(REPORTED)}"
        )
    return chosen
