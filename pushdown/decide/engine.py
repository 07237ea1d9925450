"""The engine seam: what computes a compile's entitlements.

An :class:`Engine` turns (model, operations, inventory, users, roots) into an object
with the interface backends read: ``.view(user)`` (``allowed`` / ``coverage`` /
``containers``), ``.classes``, ``.owners`` and ``.users`` — the compiler's
:class:`~pushdown.decide.compiler.Entitlements`.

:class:`LocalEngine` (the default) is the set-based compiler, in this process. Other
engines come from plugins (hook ``pushdown_make_engine``): the ``spark`` plugin runs
the same compile as a DataFrame pipeline, for full reconciles and reports of estates
past one machine. An engine may answer a scoped compile (``roots`` given) locally: the
cost of a small change is bounded by what it touches, and Spark's start-up is not.
The core never imports an engine's client library.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Protocol, runtime_checkable

from pushdown.decide.compiler import EntitlementCompiler, Entitlements
from pushdown.decide.inventory import Inventory
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

#: The engine used when the configuration names none.
DEFAULT_ENGINE = "local"


@runtime_checkable
class Engine(Protocol):
    """Computes entitlements; equal answers whichever engine runs (differential tests)."""

    name: str

    def compile(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        users: Collection[str] | None = None,
        roots: Iterable[ObjectRef] | None = None,
    ) -> Entitlements:
        """Decide for ``users`` (default: all) on held objects within ``roots`` (default:
        everything), for ``operations``; the compiler's compact form."""
        ...


class LocalEngine:
    """The set-based :class:`EntitlementCompiler`, in this process."""

    name = "local"

    def compile(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        users: Collection[str] | None = None,
        roots: Iterable[ObjectRef] | None = None,
    ) -> Entitlements:
        return EntitlementCompiler(model, operations).compile(inventory, users, roots)

    def close(self) -> None:
        """Nothing to release."""


LOCAL = LocalEngine()


def close_engine(engine: Engine) -> None:
    """Release what an engine holds (a Spark session it started), if it holds anything."""
    close = getattr(engine, "close", None)
    if callable(close):
        close()


__all__ = ["DEFAULT_ENGINE", "LOCAL", "Engine", "LocalEngine", "close_engine"]
