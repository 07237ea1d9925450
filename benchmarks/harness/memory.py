"""Peak and retained resident memory (RSS) of one step, in MiB.

The peak is the RSS high-water mark of this process, read from ``/proc/self/status``
(VmHWM) after resetting it through ``/proc/self/clear_refs``, minus the RSS at the start
of the step. Where that reset is not available the probe falls back to
``resource.getrusage().ru_maxrss``, a whole-process peak that is never reset, and
:data:`METHOD` says so.
"""

from __future__ import annotations

import gc
import resource


def _status_kib(key: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


#: whether the high-water mark can be reset per step (else the whole-process peak is used)
RESETTABLE = _reset_hwm() and _status_kib("VmHWM") is not None
#: the short name of the measure, for a report row
KIND = "RSS" if RESETTABLE else "ru_maxrss"
#: what the numbers mean, in words
METHOD = (
    "RSS high-water mark (VmHWM, reset via /proc/self/clear_refs) minus RSS at step start"
    if RESETTABLE
    else "resource.getrusage(RUSAGE_SELF).ru_maxrss (whole-process peak, not reset per step)"
)


def rss_kib() -> int:
    """The resident set size now (the process peak where /proc is missing)."""
    rss = _status_kib("VmRSS")
    return rss if rss is not None else _maxrss_kib()


def process_peak_mib() -> float:
    """The peak RSS of the whole process so far."""
    return _maxrss_kib() / 1024


class MemoryProbe:
    """``with MemoryProbe() as mem: ...`` then ``mem.peak_mib`` and ``mem.retained_mib``."""

    peak_mib: float
    retained_mib: float

    def __enter__(self) -> MemoryProbe:
        gc.collect()
        self._start = rss_kib()
        if RESETTABLE:
            _reset_hwm()
        return self

    def __exit__(self, *exc: object) -> None:
        end = rss_kib()
        high = (_status_kib("VmHWM") or 0) if RESETTABLE else _maxrss_kib()
        self.peak_mib = max(0, high - self._start) / 1024
        self.retained_mib = (end - self._start) / 1024
