"""What a Gravitino role can carry, and what the source does with each: the surface of
the source, read from Gravitino's OpenAPI (``Privilege.name``, ``Privilege.condition``,
``SecurableObject.type``) and from the official client's enums.

The rule the table spells out, name by name: what pushdown holds is **handled** (read
into the model as it is); an ALLOW pushdown cannot hold is left out with a note
(**narrowed**); a DENY pushdown cannot hold is either enforced as a DENY at least as wide
on a privilege pushdown enforces (``COVERED_BY``) or makes the whole read unusable
(**refused**: the status says which grant, nothing of the read is used). A condition
other than ALLOW and DENY is refused whatever it grants: it may deny. A DENY is never
dropped.
"""

from __future__ import annotations

from collections.abc import Iterable

from pushdown.errors import ModelError
from pushdown.model.privileges import DEPRECATED_ALIASES, Condition, Privilege
from pushdown.model.securables import SecurableType
from pushdown.reconcile.surface import SurfaceEntry, Treatment

H, N, R = Treatment.HANDLED, Treatment.NARROWED, Treatment.REFUSED

#: Privileges pushdown does not hold whose DENY is enforced as a DENY of a privilege it
#: does hold, on the same object: every backend reads a view with its table read
#: privilege (MySQL SELECT, the Hive Metastore's SELECT, Ranger's ``select`` on a table
#: resource, Unity Catalog's SELECT), so DENY SELECT_TABLE there is at least as wide.
COVERED_BY: dict[str, Privilege] = {"SELECT_VIEW": Privilege.SELECT_TABLE}

#: Gravitino's privilege names that pushdown's model does not hold (Gravitino 1.3's
#: OpenAPI and client): views and functions.
UNHELD_PRIVILEGES: tuple[str, ...] = (
    "CREATE_VIEW",
    "SELECT_VIEW",
    "REGISTER_FUNCTION",
    "EXECUTE_FUNCTION",
    "MODIFY_FUNCTION",
)

#: Gravitino's securable types pushdown's model does not place (no such object here).
UNPLACED_TYPES: tuple[str, ...] = ("VIEW", "COLUMN", "FUNCTION")

_T = "tests/source/test_source_surface.py::"
_N10 = "tests/source/test_follow.py::test_n10_a_deny_of_select_view_is_never_dropped"
_N10_DB = (
    "tests/source/test_source_deny_mariadb.py::test_n10_a_deny_of_select_view_keeps_the_view_unread_on_mariadb"
)
_ADVERSARY = (
    "tests/source/test_source_adversary.py::test_the_source_adversary_draws_from_the_surface_and_never_widens"
)
_REFUSED = "tests/source/test_follow.py::test_a_deny_pushdown_cannot_hold_refuses_the_whole_read"
_ALLOWS = _T + "test_each_privilege_and_type_is_treated_as_the_table_says"
_TYPES = _T + "test_each_securable_type_is_treated_as_the_table_says"
_CONDITIONS = _T + "test_the_conditions_are_read_as_they_are"


def privilege_of(name: str, condition: Condition) -> tuple[Privilege | None, bool]:
    """The privilege pushdown enforces for Gravitino's ``name`` under ``condition``, and
    whether it is wider than the name (a DENY enforced through :data:`COVERED_BY`);
    ``(None, False)`` when pushdown holds nothing for it."""
    try:
        return Privilege.parse(name), False
    except ModelError:
        pass
    key = name.strip().upper()
    if condition is Condition.DENY and key in COVERED_BY:
        return COVERED_BY[key], True
    return None, False


def _privilege_entries() -> Iterable[SurfaceEntry]:
    for p in Privilege:
        yield SurfaceEntry(
            f"privilege:{p.value}",
            "privilege",
            p.value,
            H,
            "read into the model as it is, ALLOW and DENY",
            (_ALLOWS,),
        )
    for alias, p in DEPRECATED_ALIASES.items():
        yield SurfaceEntry(
            f"privilege:{alias}",
            "privilege",
            f"{alias} (deprecated)",
            H,
            f"read as {p.value}, the name that replaced it",
            (_ALLOWS,),
        )
    for name in UNHELD_PRIVILEGES:
        if name in COVERED_BY:
            how = (
                f"an ALLOW is left out with a note (narrower); a DENY is enforced as DENY "
                f"{COVERED_BY[name].value} on the same object (wider: a view is read with the table "
                "read privilege), with a note; on an object pushdown cannot place, the read is refused"
            )
            yield SurfaceEntry(
                f"privilege:{name}", "privilege", name, (N, H, R), how, (_ALLOWS, _N10, _N10_DB)
            )
            continue
        how = (
            "an ALLOW is left out with a note (narrower); a DENY makes the whole read unusable "
            "(the status names the grant; the model stays as it was)"
        )
        yield SurfaceEntry(
            f"privilege:{name}", "privilege", name, (N, R), how, (_ALLOWS, _REFUSED, _ADVERSARY)
        )
    yield SurfaceEntry(
        "privilege:(a name the client does not know)",
        "privilege",
        "any other name (a later Gravitino)",
        R,
        "the official client cannot decode the role: the read is a bad answer, nothing of it is used",
        (_T + "test_a_name_or_condition_the_client_does_not_know_refuses_the_read",),
    )


def _condition_entries() -> Iterable[SurfaceEntry]:
    for c in Condition:
        yield SurfaceEntry(
            f"condition:{c.value}",
            "condition",
            c.value,
            H,
            "read as it is; DENY wins over ALLOW",
            (_CONDITIONS,),
        )
    yield SurfaceEntry(
        "condition:(other)",
        "condition",
        "any other condition",
        R,
        "it may deny: the read is refused (the client's own decoding refuses it first)",
        (
            _T + "test_a_name_or_condition_the_client_does_not_know_refuses_the_read",
            _T + "test_an_unknown_condition_refuses_the_read",
        ),
    )


def _type_entries() -> Iterable[SurfaceEntry]:
    for t in SecurableType:
        yield SurfaceEntry(
            f"type:{t.value.upper()}",
            "securable type",
            t.value.upper(),
            H,
            "placed in the model; a grant the model cannot hold there is handled as an unheld privilege",
            (_TYPES,),
        )
    for name in UNPLACED_TYPES:
        yield SurfaceEntry(
            f"type:{name}",
            "securable type",
            name,
            (N, R),
            "an ALLOW on it is left out with a note (narrower); a DENY on it makes the whole read unusable",
            (_TYPES, _REFUSED),
        )


SURFACE: tuple[SurfaceEntry, ...] = (*_privilege_entries(), *_condition_entries(), *_type_entries())
