"""The backend kinds installed: plugins add theirs from ``pushdown_register_backends``."""

from __future__ import annotations

from collections.abc import Callable

from pushdown.errors import ConfigError
from pushdown.reconcile.backend import Backend, BackendContext

BackendFactory = Callable[[BackendContext], Backend]


class BackendRegistry:
    """Collects backend kinds; plugins call :meth:`add` from ``pushdown_register_backends``."""

    def __init__(self) -> None:
        self._factories: dict[str, BackendFactory] = {}
        self._origins: dict[str, str] = {}

    def add(self, kind: str, factory: BackendFactory, *, origin: str = "") -> None:
        if kind in self._factories:
            raise ConfigError(f"backend kind {kind!r} registered twice ({self._origins[kind]} and {origin})")
        self._factories[kind] = factory
        self._origins[kind] = origin or getattr(factory, "__module__", "?")

    def create(self, kind: str, context: BackendContext) -> Backend:
        if kind not in self._factories:
            known = ", ".join(sorted(self._factories)) or "none"
            raise ConfigError(f"backend {context.name}: unknown kind {kind!r}; installed kinds: {known}")
        return self._factories[kind](context)

    def factories(self) -> dict[str, BackendFactory]:
        """Each kind's factory (the backend class, for the built-in ones)."""
        return dict(sorted(self._factories.items()))

    def kinds(self) -> dict[str, str]:
        return dict(sorted(self._origins.items()))
