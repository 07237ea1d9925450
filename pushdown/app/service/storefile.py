"""When a store may be created: never by accident.

A store named by ``store =`` in a config file must exist already: a typo there would
otherwise start from a new, empty model, and the next ``apply`` would revoke everything
the old store granted. ``pushdown init`` (or ``create=True`` in the library) creates it
deliberately. The default store (no ``store =``: ``pushdown.db`` beside the config file,
or in the working directory under the embedded defaults) is created by the first
command that records something; commands that only read it never create it.
"""

from __future__ import annotations

from pathlib import Path

from pushdown.app.settings import Config
from pushdown.errors import ConfigError, StoreError
from pushdown.journal.connection import MEMORY
from pushdown.journal.store import Store


def store_exists(config: Config) -> bool:
    return config.store == MEMORY or Path(config.store).exists()


def missing_named_store(config: Config) -> ConfigError:
    return ConfigError(
        f"{config.source}: store {config.store} does not exist; pushdown does not create a store "
        "named in the config implicitly (a typo would start from an empty model): create it "
        "with `pushdown init`, or correct the path"
    )


def nothing_recorded(config: Config) -> StoreError:
    return StoreError(
        f"no store at {config.store} yet, so nothing is recorded: `pushdown plan --spec FILE` "
        "shows what a spec would do, `pushdown apply --spec FILE` records and applies it, "
        "`pushdown init` creates an empty store"
    )


def open_store(config: Config, create: bool | None = None) -> Store:
    """Open the configured store. A missing one is created when ``create`` is True, or when
    ``create`` is None and the store is the default one; otherwise it is an error."""
    if not store_exists(config):
        if create is False or (create is None and config.store_explicit):
            raise missing_named_store(config) if config.store_explicit else nothing_recorded(config)
    return Store(config.store)
