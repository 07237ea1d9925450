"""Which engine computes the report's rows, and which operations it reports on.

An engine is a function of the model (and the operations, an inventory, a progress
callback) that yields :class:`~pushdown.report.local.Part` s: the rows of one catalog at
a time, catalogs by name, rows sorted by :func:`pushdown.report.schema.sort_key`. The
writer does the rest (Parquet, CSV, summary, the comparison with a previous report).

``local`` is built in. Another engine (the ``spark`` plugin's DataFrame pipeline)
plugs in with :func:`register_engine` when its plugin module is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from pushdown.decide.decider import compilable
from pushdown.decide.engine import Engine as CompileEngine
from pushdown.decide.inventory import Inventory
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ModelError, PushdownError
from pushdown.model.state import Model
from pushdown.report.local import Part, Progress, local_rows

Engine = Callable[[Model, Sequence[str], Inventory | None, Progress | None], Iterator[Part]]

_ENGINES: dict[str, Engine] = {"local": local_rows}


def register_engine(name: str, engine: Engine) -> None:
    """Make ``engine`` available as ``pushdown report --engine NAME``."""
    _ENGINES[name] = engine


def engine_named(name: str) -> Engine:
    engine = _ENGINES.get(name)
    if engine is None:
        known = ", ".join(sorted(_ENGINES))
        hint = " (install and configure the pushdown-spark plugin)" if name == "spark" else ""
        raise PushdownError(f"no report engine {name!r}{hint}; available: {known}")
    return engine


def has_engine(name: str) -> bool:
    return name in _ENGINES


def compiled_by(compiler: CompileEngine) -> Engine:
    """The local fan-out over the compact form another compile engine computes (the
    ``spark`` plugin's: the full compile on Spark, the rows written here)."""

    def rows(
        model: Model, operations: Sequence[str], inventory: Inventory | None, progress: Progress | None
    ) -> Iterator[Part]:
        return local_rows(model, operations, inventory, progress, compiler=compiler)

    return rows


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
