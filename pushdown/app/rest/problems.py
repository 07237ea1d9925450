"""Gravitino's error bodies: ``{"code", "type", "message"}`` with the HTTP status the
official client expects for each code (see ``reference/gravitino-rest.md``, section 4).

A handler raises :class:`Problem` (or one of the helpers below); :func:`body` is the one
place a problem becomes a response body. A message never holds a credential: the
messages are pushdown's own, naming the user, the operation and the object. A refusal
(:func:`refused`) names only what the caller asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ILLEGAL_ARGUMENTS = 1001
INTERNAL_ERROR = 1002
NOT_FOUND = 1003
ALREADY_EXISTS = 1004
NON_EMPTY = 1005
UNSUPPORTED_OPERATION = 1006
FORBIDDEN = 1008
IN_USE = 1010
UNAUTHORIZED = 1011

#: The HTTP status of each code (Gravitino's server, Utils.java and AuthenticationFilter).
STATUS = {
    ILLEGAL_ARGUMENTS: 400,
    INTERNAL_ERROR: 500,
    NOT_FOUND: 404,
    ALREADY_EXISTS: 409,
    NON_EMPTY: 409,
    UNSUPPORTED_OPERATION: 405,
    FORBIDDEN: 403,
    IN_USE: 409,
    UNAUTHORIZED: 401,
}


@dataclass
class Problem(Exception):
    """An error answer: Gravitino's code, the Java exception's simple name, a message."""

    code: int
    type: str
    message: str
    status: int = 0
    headers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)
        if not self.status:
            self.status = STATUS[self.code]
        if not self.message:  # an empty message makes the client hide the error
            self.message = self.type


def body(problem: Problem) -> dict[str, Any]:
    return {"code": problem.code, "type": problem.type, "message": problem.message}


def bad_request(message: str, type_: str = "IllegalArgumentException") -> Problem:
    return Problem(ILLEGAL_ARGUMENTS, type_, message)


def not_found(type_: str, message: str) -> Problem:
    return Problem(NOT_FOUND, type_, message)


def already_exists(type_: str, message: str) -> Problem:
    return Problem(ALREADY_EXISTS, type_, message)


def not_empty(type_: str, message: str) -> Problem:
    return Problem(NON_EMPTY, type_, message)


def forbidden(message: str) -> Problem:
    return Problem(FORBIDDEN, "ForbiddenException", message)


def refused(user: str, operation: str, target: str, rule: str | None = None) -> Problem:
    """The one refusal a caller sees: who, what, on the name the caller gave, and at most
    a fixed rule that holds for every object alike (never an owner, holder or grant: the
    reasons stay in the server's log and in ``pushdown explain``), so a missing object and
    a forbidden one read the same."""
    return forbidden(f"{user} may not {operation} {target}" + (f": {rule}" if rule else ""))


def unsupported(message: str) -> Problem:
    return Problem(UNSUPPORTED_OPERATION, "UnsupportedOperationException", message)


def unauthorized(message: str, challenge: str) -> Problem:
    return Problem(UNAUTHORIZED, "UnauthorizedException", message, headers={"WWW-Authenticate": challenge})


def busy(message: str, retry_after: float) -> Problem:
    """The store is busy: try again (HTTP 503 with Retry-After; the client sees a RuntimeError)."""
    seconds = str(max(1, round(retry_after)))
    return Problem(INTERNAL_ERROR, "ServiceUnavailableException", message, 503, {"Retry-After": seconds})


def internal(request_id: str) -> Problem:
    return Problem(
        INTERNAL_ERROR,
        "RuntimeException",
        f"internal error; the server's log has the details under request id {request_id}",
    )
