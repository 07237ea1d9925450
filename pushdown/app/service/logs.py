"""Logging for the daemon: plain lines, or one JSON object per line (``--log-format json``).

Extra fields given with ``extra={...}`` (backend, result, ops, ...) become JSON keys.
Nothing logged carries a credential: errors are pushdown's own messages, which name
where a secret comes from, never its value. A log line is one line whatever a caller
sent: in text, control characters and line or paragraph separators (U+2028, U+2029) are
written as escapes (``\\n``, ``\\u2028``); in JSON every non-ASCII character is.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from pushdown.model.text import escaped

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "pid": record.process,
            "msg": record.getMessage(),
        }
        out.update({k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=True)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message``, the message escaped so it stays on its line (a
    traceback keeps its own lines, each escaped)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return escaped(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        return "\n".join(escaped(line) for line in super().formatException(ei).split("\n"))


def setup(fmt: str = "text", level: str = "INFO") -> None:
    """Send pushdown's logs to stderr in ``fmt`` (text or json) from ``level`` up."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def current() -> tuple[str, str]:
    """The format and level :func:`setup` was given (for a child process logging alike)."""
    root = logging.getLogger()
    fmt = "json" if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers) else "text"
    level = logging.getLevelName(root.level).lower()
    return fmt, level if level in ("debug", "info", "warning", "error") else "info"
