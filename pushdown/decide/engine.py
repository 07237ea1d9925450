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

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from pushdown.decide.compiler import EntitlementCompiler, Entitlements
from pushdown.decide.inventory import Inventory
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
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


@runtime_checkable
class CatalogEngine(Protocol):
    """An engine that computes a full compile once and hands it out one catalog at a time
    (the ``spark`` plugin's: the answers stay on the executors, the driver holds one
    catalog's compact form at a time)."""

    def compile_catalogs(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        users: Collection[str] | None = None,
    ) -> Iterator[tuple[str, Entitlements]]: ...


def by_catalog(
    engine: Engine,
    model: Model,
    operations: Sequence[str],
    inventory: Inventory,
    users: Collection[str] | None = None,
) -> Iterator[tuple[str, Entitlements]]:
    """A full compile, one held catalog at a time, by name: ``(catalog, entitlements)``,
    where the entitlements are those of a compile of that catalog's held objects alone.
    A caller that drops each before taking the next holds one catalog's answer at a time,
    never the estate's: the bound of a full reconcile's peak on the driver."""
    if isinstance(engine, CatalogEngine):
        yield from engine.compile_catalogs(model, operations, inventory, users)
        return
    for catalog in sorted(inventory.children(METALAKE), key=lambda c: c.names):
        if catalog.type is SecurableType.CATALOG:
            one = Inventory.of(inventory.within(catalog))
            yield catalog.names[0], engine.compile(model, operations, one, users)


def close_engine(engine: Engine) -> None:
    """Release what an engine holds (a Spark session it started), if it holds anything."""
    close = getattr(engine, "close", None)
    if callable(close):
        close()


__all__ = ["DEFAULT_ENGINE", "LOCAL", "CatalogEngine", "Engine", "LocalEngine", "by_catalog", "close_engine"]
