"""The refusals of the Ranger Admin stand-in, worded and coded as Ranger Admin words them.

Ranger answers a refused request with an HTTP status and a ``VXResponse`` body
(``{"statusCode": 1, "msgDesc": "..."}``); a validator's refusal carries its error code
inside the message (``error code[3010], reason[...]``), which is what clients match on.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RangerError", "not_found", "validation_failure"]


class RangerError(Exception):
    """A request the stand-in refuses: ``status`` is the HTTP status, ``message`` Ranger's words."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def body(self) -> dict[str, Any]:
        """The ``VXResponse`` JSON Ranger Admin sends with a refusal."""
        return {"statusCode": 1, "msgDesc": self.message}


def validation_failure(
    code: int, reason: str, field: str, kind: str = "semantically incorrect"
) -> RangerError:
    """A validator's refusal (HTTP 400), serialised the way Ranger's validators do."""
    text = (
        f"(0) Validation failure: error code[{code}], reason[{reason}], "
        f"field[{field}], subfield[null], type[{kind}] "
    )
    return RangerError(400, text)


def not_found(what: str) -> RangerError:
    """An object looked up by id or name that does not exist (HTTP 404)."""
    return RangerError(404, f"Not found: {what}")
