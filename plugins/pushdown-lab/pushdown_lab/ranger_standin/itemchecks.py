"""The policy-item and validity-schedule checks of the stand-in, after Ranger 2.9's
RangerPolicyValidator (isValidPolicyItems, isValidItemAccesses, isValidPolicyItemAccess) and
RangerValidityScheduleValidator.

Ranger refuses an item that is null (3019), a data-masking item without a mask type (3019), an
item with no access and no delegated admin (3002, ``policy item accesses``), an access that is
null (3021), has no type (3002, ``policy item access type``), an unknown type (3022) or
``isAllowed: false`` (3023), an item naming no user, group or role (3020), and a user, group or
role named ``null`` (any case Ranger lists) or blank (3053, 3054, 3055). Like Ranger, the
checks trim the names and drop duplicate names and accesses of an item they accept (the policy
is stored so). A validity schedule with no start, end or recurrence, a start or end that is not
``yyyy/MM/dd HH:mm:ss``, an end not later than its start, or an unknown time zone is refused
with Ranger's error code 0.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import available_timezones

from pushdown_lab.ranger_standin.errors import RangerError, validation_failure

__all__ = ["check_items", "check_validity_schedules"]

#: the principal names Ranger refuses in an item (after trimming)
INVALID_NAMES = frozenset({"null", "NULL", "Null", ""})
_NAME_CODES = {"users": (3053, "user"), "groups": (3054, "group"), "roles": (3055, "role")}


def check_items(policy: dict[str, Any], kinds: tuple[str, ...], access_types: list[str]) -> None:
    """Every item of ``kinds`` in ``policy``, checked (and, when accepted, normalised in place)."""
    for kind in kinds:
        items = policy.get(kind) or []
        for item in items:
            _check_item(item, kind, access_types)


def _check_item(item: Any, kind: str, access_types: list[str]) -> None:
    if not isinstance(item, dict):
        raise validation_failure(3019, "policy items object was null", "policy item", "missing")
    if kind == "dataMaskPolicyItems":
        mask = item.get("dataMaskInfo") or {}
        if not str(mask.get("dataMaskType") or "").strip():
            raise validation_failure(
                3019, "policy items object was null", "policy item datamask-type", "missing"
            )
    accesses = item.get("accesses")
    if not accesses:
        if item.get("delegateAdmin") is not True:
            raise validation_failure(
                3002, "Internal error: missing field[policy item accesses]", "policy item accesses", "missing"
            )
    else:
        item["accesses"] = _checked_accesses(accesses, access_types)
    if not (item.get("users") or item.get("groups") or item.get("roles")):
        raise validation_failure(
            3020,
            "All of users,  user-groups and roles collections on the policy item were null/empty",
            "policy item users/user-groups/roles",
            "missing",
        )
    for names in ("users", "groups", "roles"):
        if item.get(names):
            item[names] = _checked_names(item[names], names)


def _checked_accesses(accesses: list[Any], access_types: list[str]) -> list[Any]:
    kept: list[Any] = []
    seen: set[Any] = set()
    for access in accesses:
        if not isinstance(access, dict):
            raise validation_failure(
                3021, "policy items access object was null", "policy item access", "missing"
            )
        kind = access.get("type")
        if kind in seen:  # Ranger drops a repeated access type
            continue
        seen.add(kind)
        if not str(kind or "").strip():
            raise validation_failure(
                3002,
                "Internal error: missing field[policy item access type]",
                "policy item access type",
                "missing",
            )
        if str(kind).lower() not in access_types:
            raise validation_failure(
                3022,
                f"Invalid access type: access type=[{kind}], valid access types=[{access_types}]",
                "policy item access type",
            )
        if access.get("isAllowed") is False:
            raise _deny_access()
        kept.append(access)
    return kept


def _deny_access() -> RangerError:
    return validation_failure(
        3023,
        "Currently deny access types are not supported. Access type is set to deny.",
        "policy item access type allowed",
    )


def _checked_names(names: list[Any], kind: str) -> list[Any]:
    trimmed: list[Any] = []
    for name in names:
        value = name.strip() if isinstance(name, str) else name
        if value not in trimmed:
            trimmed.append(value)
    if any(value is None or value in INVALID_NAMES for value in trimmed):
        code, what = _NAME_CODES[kind]
        raise validation_failure(code, f"policy items {what} was null", f"policy item {kind}", "missing")
    return trimmed


#: Ranger's validity-schedule date format (RangerValiditySchedule), as strptime reads it
_DATE = "%Y/%m/%d %H:%M:%S"


def check_validity_schedules(policy: dict[str, Any]) -> None:
    """Ranger's RangerValidityScheduleValidator, its time checks (recurrences are taken as given)."""
    for schedule in policy.get("validitySchedules") or []:
        schedule = schedule if isinstance(schedule, dict) else {}
        start, end = schedule.get("startTime"), schedule.get("endTime")
        if not start and not end and not schedule.get("recurrences"):
            raise _schedule("empty values", "startTime,endTime,recurrences", "missing")
        begins = _date(start, "startTime") if start else datetime.now()
        ends = _date(end, "endTime") if end else datetime.max
        if begins >= ends:
            raise _schedule("endTime is not later than startTime", "startTime")
        zone = str(schedule.get("timeZone") or "").strip()
        if zone and _zones() and zone not in _zones():  # no time-zone database: not checked
            raise _schedule("invalid timeZone", "timeZone")


def _date(text: Any, field: str) -> datetime:
    try:
        return datetime.strptime(str(text), _DATE)
    except ValueError:
        raise _schedule("invalid value", field, "missing") from None


def _schedule(reason: str, field: str, kind: str = "semantically incorrect") -> RangerError:
    text = (
        f"(0) Validation failure: error code[0], reason[{reason}], field[{field}], subfield[], type[{kind}] "
    )
    return RangerError(400, text)


_ZONES: set[str] = set()


def _zones() -> set[str]:
    if not _ZONES:
        _ZONES.update(available_timezones())
    return _ZONES
