"""The backend's settings, checked: a wrong value is a clear configuration error."""

from __future__ import annotations

from pushdown.errors import ConfigError
from pushdown.reconcile.backend import BackendContext


def flag(context: BackendContext, key: str, *, default: bool = False) -> bool:
    """A yes/no setting: TOML ``true``/``false`` (or the strings)."""
    value = context.setting(key, default)
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "yes", "1", "false", "no", "0"):
        return str(value).lower() in ("true", "yes", "1")
    raise ConfigError(f"backend {context.name}: setting {key!r} must be true or false, not {value!r}")


def positive(context: BackendContext, key: str, default: int) -> int:
    value = context.setting(key, default)
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise ConfigError(
            f"backend {context.name}: setting {key!r} must be a whole number above 0, not {value!r}"
        )
    return number


def seconds(context: BackendContext, key: str, default: float) -> float:
    value = context.setting(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = 0.0
    if not 0 < number < 10**6:  # also refuses nan and inf
        raise ConfigError(f"backend {context.name}: setting {key!r} must be seconds above 0, not {value!r}")
    return number
