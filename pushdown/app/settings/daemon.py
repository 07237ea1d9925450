"""The daemon's settings: the ``[daemon]`` table of the config file.

    [daemon]
    interval = "5m"        # full reconcile of each backend, jittered by ``jitter``
    jitter = 0.1           # a fraction of the interval, either way
    poll = "200ms"         # how often each backend's worker looks at the journal
    backoff_min = "5s"     # temporary errors: first wait, doubling up to backoff_max
    backoff_max = "5m"
    lease_ttl = "30s"      # the one-active-daemon lease outlives a vanished holder by this
    gather = "20ms"        # the least time between the starts of a worker's rounds
    nice = 5               # under `pushdown serve`: the workers' process, this much lower CPU priority
    freeze = true          # when a full reconcile has read the model, it leaves the collector's walks
    host = "127.0.0.1"     # /metrics, /livez, /readyz
    port = 9464            # 0: any free port (the log says which)

Durations are seconds (a number) or a string with a unit: ``ms``, ``s``, ``m``, ``h``;
at most 7 days; ``lease_ttl`` at least 1 s; ``gather`` at most ``poll`` counts (a round
starts at least once a poll). ``nice``: a whole number from 0 (the server's priority) to 19.
Every value is checked when the config is loaded; an error names the key and the value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pushdown.errors import ConfigError

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$")


@dataclass(frozen=True)
class DaemonSettings:
    interval: float = 300.0
    jitter: float = 0.1
    poll: float = 0.2
    backoff_min: float = 5.0
    backoff_max: float = 300.0
    lease_ttl: float = 30.0
    #: the least seconds between the starts of a worker's rounds: the commits of a stream
    #: that arrive while a round runs, or soon after it, are gathered into the next one
    gather: float = 0.02
    #: how much lower the workers' CPU priority is than the serving process's (``nice``)
    nice: int = 5
    #: when a full reconcile has read its model, freeze what is alive (``gc.freeze``)
    freeze: bool = True
    host: str = "127.0.0.1"
    port: int = 9464


DURATIONS = ("interval", "poll", "backoff_min", "backoff_max", "lease_ttl", "gather")
#: the longest duration taken: longer ones overflow the waits (a worker thread would die)
MAX_DURATION = 7 * 24 * 3600.0
#: the shortest lease: it is renewed every lease_ttl / 3, on a loaded machine too
MIN_LEASE_TTL = 1.0
KNOWN = (*DURATIONS, "jitter", "nice", "freeze", "host", "port")


def duration(value: Any) -> float | None:
    """Seconds from a number or a string such as ``"200ms"``, ``"5m"``; None if neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (match := _DURATION.match(value)):
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    else:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def parse(raw: Any, source: str) -> DaemonSettings:
    """Check a ``[daemon]`` table; raise :class:`ConfigError` naming the key and value."""
    if raw is None:
        return DaemonSettings()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: [daemon] must be a table (interval, poll, port, ...)")
    unknown = sorted(set(raw) - set(KNOWN))
    if unknown:
        raise ConfigError(
            f"{source}: daemon: unknown setting(s) {', '.join(unknown)}; known: {', '.join(KNOWN)}"
        )
    values: dict[str, Any] = {}
    for key in DURATIONS:
        if key in raw:
            seconds = duration(raw[key])
            if seconds is None:
                raise ConfigError(
                    f"{source}: daemon.{key} = {_shown(raw[key])}: a duration is a positive number of "
                    'seconds or a string such as "200ms", "5s", "5m", "1h"'
                )
            if seconds > MAX_DURATION:
                raise ConfigError(f"{source}: daemon.{key} = {_shown(raw[key])}: at most 7 days")
            values[key] = seconds
    if "jitter" in raw:
        j = raw["jitter"]
        if isinstance(j, bool) or not isinstance(j, int | float) or not 0 <= j <= 0.5:
            raise ConfigError(f"{source}: daemon.jitter = {_shown(j)}: a fraction from 0 to 0.5")
        values["jitter"] = float(j)
    if "nice" in raw:
        n = raw["nice"]
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 19:
            raise ConfigError(f"{source}: daemon.nice = {_shown(n)}: a whole number from 0 to 19")
        values["nice"] = n
    if "freeze" in raw:
        f = raw["freeze"]
        if not isinstance(f, bool):
            raise ConfigError(f"{source}: daemon.freeze = {_shown(f)}: true or false")
        values["freeze"] = f
    if "host" in raw:
        h = raw["host"]
        if not isinstance(h, str) or not h or any(not c.isprintable() or c.isspace() for c in h):
            raise ConfigError(f'{source}: daemon.host = {_shown(h)}: an address such as "127.0.0.1"')
        values["host"] = h
    if "port" in raw:
        p = raw["port"]
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 65535:
            raise ConfigError(f"{source}: daemon.port = {_shown(p)}: a whole number from 0 to 65535")
        values["port"] = p
    settings = DaemonSettings(**values)
    if settings.lease_ttl < MIN_LEASE_TTL:
        raise ConfigError(
            f"{source}: daemon.lease_ttl = {_shown(raw['lease_ttl'])}: at least 1 s (it is renewed every "
            "lease_ttl / 3; a shorter one could lapse between renewals and let a second daemon apply)"
        )
    if settings.backoff_max < settings.backoff_min:
        raise ConfigError(f"{source}: daemon.backoff_max is shorter than daemon.backoff_min")
    return settings
