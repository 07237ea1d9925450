"""The configuration file (TOML): where the store lives, how to reach each backend
(:mod:`~pushdown.app.settings.backends`), and the tables of every part: ``[access]``,
``[daemon]``, ``[serve]``, ``[source]``, the engine's. Checked whole before anything runs.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pushdown.app.settings.backends import (
    BackendConfig,
    _backend,
    _check_text,
    _has_control,
    _toml,
    is_secret_key,
)
from pushdown.app.settings.daemon import DaemonSettings
from pushdown.app.settings.daemon import parse as parse_daemon
from pushdown.app.settings.serve import ServeSettings
from pushdown.app.settings.serve import parse as parse_serve
from pushdown.app.settings.source import SourceSettings, check_backends
from pushdown.app.settings.source import parse as parse_source
from pushdown.errors import ConfigError
from pushdown.journal.connection import MEMORY, problem_with

DEFAULT_CONFIG = "pushdown.toml"
DEFAULT_STORE = "pushdown.db"

#: The embedded default: the example's "demo" backend records decisions in a JSON file.
EMBEDDED: dict[str, Any] = {
    "store": DEFAULT_STORE,
    "backends": {"demo": {"kind": "recording", "state": "pushdown-demo-state.json"}},
}


@dataclass(frozen=True)
class AccessSettings:
    """The ``[access]`` table: who administers pushdown itself.

    ``service_admins``: who may create a metalake (Gravitino's service admins).
    ``admin``: the identity the CLI and the spec loader act as; its changes are recorded
    under that name and not checked against the requirement table (an operator's tool)."""

    service_admins: tuple[str, ...] = ()
    admin: str = "pushdown"


@dataclass(frozen=True)
class Config:
    """``store_explicit``: the store was named by ``store =`` in a config file, so it must
    exist already (``pushdown init`` creates it); the default store is created by the
    first command that records something."""

    store: str = DEFAULT_STORE
    backends: Mapping[str, BackendConfig] = field(default_factory=dict)
    source: str = "embedded defaults"
    store_explicit: bool = False
    #: the ``[daemon]`` table (``pushdown daemon``)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    #: the ``[serve]`` table (``pushdown serve``)
    serve: ServeSettings = field(default_factory=ServeSettings)
    #: what computes entitlements: "local" (the default) or an engine a plugin provides
    engine: str = "local"
    #: the engine's own table (``[spark]``: ``master`` and any ``spark.*`` setting)
    engine_settings: Mapping[str, Any] = field(default_factory=dict)
    #: the ``[access]`` table
    access: AccessSettings = field(default_factory=AccessSettings)
    #: the ``[source]`` table: the model follows this source (None: pushdown's own model)
    follow: SourceSettings | None = None


def _store(raw: Mapping[str, Any], base: Path, source: str) -> str:
    value = raw.get("store", DEFAULT_STORE)
    if not isinstance(value, str) or not value or _has_control(value):
        raise ConfigError(f"{source}: store = {_toml(value)}: must be the path of the store file")
    path = value if value == MEMORY else str(base / value)
    why = problem_with(path)
    if why is not None:
        raise ConfigError(f"{source}: store = {_toml(value)}: {path} {why}")
    return path


def from_mapping(
    raw: Mapping[str, Any], base: Path, source: str, *, explicit_store: bool | None = None
) -> Config:
    """Check and resolve a config; ``explicit_store`` defaults to whether ``store`` is set."""
    unknown = set(raw) - {"store", "backends", "daemon", "serve", "engine", "access", "source", *ENGINES}
    if unknown:
        raise ConfigError(
            f"{source}: unknown setting(s) {', '.join(sorted(unknown))}; "
            f"known: store, backends, daemon, serve, engine, access, source, {', '.join(ENGINES)}"
        )
    access = _access(raw.get("access", {}), source)
    daemon = parse_daemon(raw.get("daemon"), source)
    serve = parse_serve(raw.get("serve"), source, base)
    engine, engine_settings = _engine(raw, source)
    store = _store(raw, base, source)
    backends = raw.get("backends", {})
    if not isinstance(backends, Mapping):
        raise ConfigError(f"{source}: [backends] must be a table of backend tables")
    made = {n: _backend(n, b, base, source) for n, b in backends.items()}
    follow = parse_source(raw.get("source"), source)
    if follow is not None:
        check_backends(follow, made, source)
    explicit = "store" in raw if explicit_store is None else explicit_store
    return Config(
        store,
        made,
        source,
        explicit and store != MEMORY,
        daemon=daemon,
        engine=engine,
        engine_settings=engine_settings,
        access=access,
        serve=serve,
        follow=follow,
    )


def _access(table: Any, source: str) -> AccessSettings:
    if not isinstance(table, Mapping):
        raise ConfigError(f'{source}: [access] must be a table (service_admins = ["..."], admin = "...")')
    unknown = set(table) - {"service_admins", "admin"}
    if unknown:
        raise ConfigError(
            f"{source}: access.{sorted(unknown)[0]}: unknown setting; known: service_admins, admin"
        )
    admins = table.get("service_admins", [])
    if not isinstance(admins, list) or any(_check_text(a) is not None for a in admins):
        raise ConfigError(f"{source}: access.service_admins must be a list of user names")
    admin = table.get("admin", AccessSettings.admin)
    if _check_text(admin) is not None:
        raise ConfigError(f"{source}: access.admin = {_toml(admin)}: {_check_text(admin)}")
    return AccessSettings(tuple(admins), str(admin))


#: Engines and the settings their table accepts (besides any ``spark.*`` key for spark).
ENGINES: dict[str, frozenset[str]] = {"spark": frozenset({"master", "app_name", "progress", "staging"})}


def _engine(raw: Mapping[str, Any], source: str) -> tuple[str, dict[str, Any]]:
    """``engine = "local" | "spark"`` and the ``[spark]`` table, checked."""
    name = raw.get("engine", "local")
    if name != "local" and name not in ENGINES:
        known = ", ".join(json.dumps(n) for n in ("local", *ENGINES))
        raise ConfigError(f"{source}: engine = {_toml(name)}: must be one of {known}")
    table = raw.get("spark", {})
    if not isinstance(table, Mapping):
        raise ConfigError(f'{source}: [spark] must be a table (master = "local[*]", spark.* settings)')
    settings: dict[str, Any] = {"master": "local[*]", "app_name": "pushdown", "progress": True}
    for key, value in _flat(table).items():
        where = f"{source}: spark.{key}" if not key.startswith("spark.") else f"{source}: [spark] {key}"
        if key in ("master", "app_name", "staging"):
            if _check_text(value) is not None:
                raise ConfigError(f"{where} = {_toml(value)}: {_check_text(value)}")
            if key == "master" and not _spark_master(value):
                raise ConfigError(
                    f'{where} = {_toml(value)}: Spark takes "yarn" or a master beginning with '
                    "local, spark, mesos or k8s (local[*], spark://host:7077, k8s://https://host:443)"
                )
        elif key == "progress":
            if not isinstance(value, bool):
                raise ConfigError(f"{where} = {_toml(value)}: must be true or false")
        elif key.startswith("spark."):
            if is_secret_key(key):
                raise ConfigError(f"{where}: secrets do not belong in this file; use Spark's own config")
            if isinstance(value, bool):
                value = "true" if value else "false"
            if not isinstance(value, str | int | float) or (isinstance(value, str) and _has_control(value)):
                raise ConfigError(f"{where} = {_toml(value)}: must be a string, number or boolean")
            value = str(value)
        else:
            raise ConfigError(
                f"{where}: unknown setting; known: master, app_name, progress, staging and any spark.* key"
            )
        settings[key] = value
    return str(name), settings if name == "spark" or "spark" in raw else {}


def _spark_master(value: str) -> bool:
    """Whether Spark would take ``value`` as a master URL (its own first check, made here so
    a typo is one line at load time, not a JVM's stack trace at the first full compile)."""
    return value == "yarn" or value.startswith(("local", "spark", "mesos", "k8s"))


def _flat(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``spark.executor.memory = "2g"`` (unquoted) parses as nested tables; flatten them back."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def load_config(path: str | Path | None = None) -> Config:
    """Read ``path``, else ``./pushdown.toml`` if present, else the embedded defaults.

    Every setting is checked here, before anything is written: an error names the
    file, the key and the value."""
    if path is None:
        default = Path(DEFAULT_CONFIG)
        if not default.exists():
            return from_mapping(EMBEDDED, Path.cwd(), "embedded defaults", explicit_store=False)
        path = default
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the config: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte {exc.start}): a config is a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{p}: nested too deeply to be a pushdown config") from None
    return from_mapping(raw, p.parent.resolve(), str(p))
