"""The settings, the bottom of the app wing: the configuration of every part parsed and
checked here (the file and ``[access]`` in :mod:`~pushdown.app.settings.config`, the
backends and their secrets in :mod:`~pushdown.app.settings.backends`, ``[daemon]`` in
:mod:`~pushdown.app.settings.daemon`, ``[serve]`` in :mod:`~pushdown.app.settings.serve`,
``[source]`` in :mod:`~pushdown.app.settings.source`). It imports the core only: never the
service, never a front-end."""

from __future__ import annotations

from pushdown.app.settings.backends import BackendConfig, is_secret_key, redact, resolve_secret
from pushdown.app.settings.config import (
    DEFAULT_CONFIG,
    DEFAULT_STORE,
    EMBEDDED,
    ENGINES,
    AccessSettings,
    Config,
    from_mapping,
    load_config,
)
from pushdown.errors import ConfigError

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_STORE",
    "EMBEDDED",
    "ENGINES",
    "AccessSettings",
    "BackendConfig",
    "Config",
    "ConfigError",
    "from_mapping",
    "is_secret_key",
    "load_config",
    "redact",
    "resolve_secret",
]
