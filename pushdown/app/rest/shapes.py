"""Gravitino's JSON shapes, in and out.

In: a request body is checked field by field (a wrong type, a missing name, a control
character or an unknown privilege is a 400 naming the field) before anything runs.
Out: enums are written lower case (``select_table``, ``allow``, ``table``, ``user``);
audit objects carry ISO-8601 UTC times ending in ``Z``; a metadata object's full name
is its dotted name, the metalake's is the metalake's own name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pushdown.app.rest import problems
from pushdown.errors import ModelError
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import FLAT_TYPES, METALAKE, ObjectRef, SecurableType
from pushdown.model.text import MAX_NAME, check_name, has_control, too_long

Json = dict[str, Any]

#: Gravitino's metadata-object types that pushdown's model holds (the rest are refused).
TYPES = {t.value: t for t in SecurableType}
#: The longest dotted full name a path or body may send: four parts of :data:`MAX_NAME`
#: characters, each quoted with every character a doubled backtick, and three dots. Each
#: part is then held to :data:`MAX_NAME` on its own, as the model holds it.
MAX_FULL_NAME = 4 * (2 * MAX_NAME + 2) + 3


#: The deepest nesting a body may have (Gravitino's deepest, a role's privileges, is 4).
MAX_DEPTH = 32
#: The most digits a JSON number may have (no Gravitino field holds a larger one).
MAX_DIGITS = 40


class _Unfit(ValueError):
    """A JSON text that parses, but holds what no request may (said in the message)."""


def _number(text: str) -> int | float:
    if len(text) > MAX_DIGITS:
        raise _Unfit(f"a number of more than {MAX_DIGITS} digits")
    return float(text) if any(c in text for c in ".eE") else int(text)


def _constant(text: str) -> Any:
    raise _Unfit(f"{text}, which is not JSON")


def parse_json(raw: bytes) -> Any:
    """The body as JSON; a 400 for anything that is not strict JSON a request may hold:
    invalid UTF-8, a lone UTF-16 surrogate (``"\\ud800"``), NaN or Infinity, a number of
    more than :data:`MAX_DIGITS` digits, nesting deeper than :data:`MAX_DEPTH`."""
    if not raw.strip():
        return None
    try:
        value = json.loads(raw, parse_int=_number, parse_float=_number, parse_constant=_constant)
    except _Unfit as exc:
        raise problems.bad_request(f"the request body holds {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise problems.bad_request(f"the request body is not valid JSON: {exc}") from None
    except (RecursionError, ValueError):
        raise problems.bad_request("the request body is not JSON a request may hold") from None
    _check_tree(value)
    return value


def _check_tree(value: Any) -> None:
    """Depth and text of every value, without recursion (a deep body cannot exhaust it)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise problems.bad_request(f"the request body is nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                _check_text(key)
                stack.append((inner, depth + 1))
        elif isinstance(item, list):
            stack.extend((inner, depth + 1) for inner in item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise problems.bad_request(
            "the request body holds a lone UTF-16 surrogate (\\ud800-\\udfff): not text"
        ) from None


def obj(body: Any, what: str = "the request body") -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise problems.bad_request(f"{what} must be a JSON object")
    return body


def name(value: Any, field: str) -> str:
    """A name: a non-empty string of at most :data:`MAX_NAME` characters (Gravitino's
    limit), without control characters or line separators."""
    if not isinstance(value, str) or not value.strip():
        raise problems.bad_request(f'"{field}" must be a non-empty string')
    if too_long(value):
        raise problems.bad_request(f'"{field}" may hold at most {MAX_NAME} characters, not {len(value)}')
    if has_control(value):
        raise problems.bad_request(f'"{field}" {value!r} contains a control character; names may not')
    return value


def optional_text(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise problems.bad_request(f'"{field}" must be a string or null')
    return value


def properties(value: Any, field: str = "properties") -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise problems.bad_request(f'"{field}" must be an object of string values')
    for key in value:
        if not key or has_control(key):
            raise problems.bad_request(f'"{field}" has an empty key or a key with a control character')
    return dict(value)


def names_list(value: Any, field: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise problems.bad_request(f'"{field}" must be a non-empty list of names')
    return [name(v, f"{field}[{i}]") for i, v in enumerate(value)]


def flag(value: str | None, field: str, default: bool = False) -> bool:
    """A query flag: ``true``/``false`` in any case (the client sends ``True``)."""
    if value is None:
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise problems.bad_request(f"query parameter {field}={value!r}: use true or false")


# -- metadata objects -------------------------------------------------------------------


def securable_type(text: Any) -> SecurableType:
    if not isinstance(text, str) or text.lower() not in TYPES:
        raise problems.bad_request(
            f"unknown metadata object type {text!r}; known: {', '.join(TYPES)}",
            "IllegalMetadataObjectException",
        )
    return TYPES[text.lower()]


def object_ref(type_text: Any, full_name: Any, metalake: str) -> ObjectRef:
    """The one reading of a path's ``{type}/{fullName}`` (and a body's ``type``/``fullName``):
    a data object's dotted name (``cat.db.t``, backticks quote a segment), a role's flat name
    (dots and backticks are part of it), the metalake's own name. Both the check and the
    change use the key this returns."""
    kind = securable_type(type_text)
    if kind is SecurableType.METALAKE or kind in FLAT_TYPES:
        text = name(full_name, "fullName")
    else:
        text = _dotted(full_name)
    if kind is SecurableType.METALAKE:
        if text != metalake:
            raise problems.not_found("NoSuchMetadataObjectException", f"metalake {text!r} is not served here")
        return METALAKE
    try:
        ref = ObjectRef.of(kind, text)
        if kind not in FLAT_TYPES:
            for part in ref.names:
                check_name(kind.label, part)
        return ref
    except ModelError as exc:
        raise problems.bad_request(
            f"{kind.label} {text!r}: {exc}", "IllegalMetadataObjectException"
        ) from None


def _dotted(value: Any) -> str:
    """A data object's dotted full name, before it is parsed: a non-empty string of at most
    :data:`MAX_FULL_NAME` characters without control characters (each part's own limit is
    checked once the one parser has split it)."""
    if not isinstance(value, str) or not value.strip():
        raise problems.bad_request('"fullName" must be a non-empty string')
    if len(value) > MAX_FULL_NAME:
        raise problems.bad_request(
            f'"fullName" may hold at most {MAX_FULL_NAME} characters, not {len(value)}'
        )
    if has_control(value):
        raise problems.bad_request(f'"fullName" {value!r} contains a control character; names may not')
    return value


def full_name(ref: ObjectRef, metalake: str) -> str:
    return metalake if ref == METALAKE else ref.name


def privilege(item: Any, where: str) -> tuple[Privilege, Condition]:
    """``{"name": "select_table", "condition": "allow"}``, any case; an unknown name is a 400."""
    entry = obj(item, where)
    raw_name, raw_cond = entry.get("name"), entry.get("condition", "allow")
    if not isinstance(raw_name, str) or not isinstance(raw_cond, str):
        raise problems.bad_request(
            f"{where}: name and condition must be strings", "IllegalPrivilegeException"
        )
    try:
        return Privilege.parse(raw_name), Condition.parse(raw_cond)
    except ModelError as exc:
        raise problems.bad_request(f"{where}: {exc}", "IllegalPrivilegeException") from None


def privileges(value: Any, field: str = "privileges") -> list[tuple[Privilege, Condition]]:
    if not isinstance(value, list) or not value:
        raise problems.bad_request(f'"{field}" must be a non-empty list', "IllegalPrivilegeException")
    return [privilege(item, f"{field}[{i}]") for i, item in enumerate(value)]


def privilege_json(p: Privilege, c: Condition) -> Json:
    return {"name": p.value.lower(), "condition": c.value.lower()}


# -- audit ------------------------------------------------------------------------------


def audit(record: Any) -> Json:
    """An audit object from the core's ``Audit`` (None: nothing recorded, an empty object)."""
    if record is None:
        return {}
    return {
        "creator": record.creator,
        "createTime": record.create_time,
        "lastModifier": record.last_modifier,
        "lastModifiedTime": record.last_modified_time,
    }
