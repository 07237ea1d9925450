"""The report's rows: one per (user, object, operation, reason), the same for every engine.

Every engine (the local one here, the Spark one of the ``spark`` plugin) produces rows
of exactly these columns, in this order, as plain tuples of ``str`` or ``None``:

=============  =======  ================================================================
column         type     meaning
=============  =======  ================================================================
catalog        string   the object's catalog (the Parquet partition key:
                        ``catalog=<name>/part-*.parquet``)
user           string   the user the model allows
object         string   the object's full dotted name
object_type    string   ``catalog``, ``schema``, ``table``, ``topic``, ``fileset``, ``model``
operation      string   an operation of the requirement table (``pushdown explain --list``)
reason         string   ``grant`` (a role's ALLOW), ``owner`` (ownership) or
                        ``service_admin``
role           string?  ``grant``: the role holding the ALLOW; else null
privilege      string?  ``grant``: the privilege ALLOWed (e.g. ``SELECT_TABLE``); else null
source         string?  ``grant``: the object the ALLOW is on (the object itself or an
                        ancestor); ``owner``: the object the user owns; else null
source_type    string?  the type of ``source``; ``metalake`` for the metalake
via            string?  ``grant``: ``direct`` when the user holds the role, ``group``
                        when through a group; else null
group          string?  ``via = group``: the group (the first by name, as the trace
                        shows it); else null
=============  =======  ================================================================

A row's *reason* is one piece of evidence the requirement of the operation accepts:
an ALLOW of one of the privileges it asks for (not beaten by a DENY of that privilege
on the path), an ownership it accepts, or service-admin status. The gates
(USE_CATALOG / USE_SCHEMA, i.e. being able to load the catalog and the schema) must
hold for every row but are rows of their own (``load_catalog``, ``load_schema``), not
repeated as reasons. Listings are left out: ``list_tables`` (and the other leaf
listings) on a schema is allowed exactly where ``load_schema`` is, ``list_schemas`` on
a catalog exactly where ``load_catalog`` is.

Rows come sorted by their columns as strings (null as ``""``), so two reports can be
compared by merging, without holding either in memory.
"""

from __future__ import annotations

from typing import Final

#: The columns, in order.
COLUMNS: Final = (
    "catalog",
    "user",
    "object",
    "object_type",
    "operation",
    "reason",
    "role",
    "privilege",
    "source",
    "source_type",
    "via",
    "group",
)
#: The columns that are never null.
REQUIRED: Final = frozenset(COLUMNS[:6])

GRANT: Final = "grant"
OWNER: Final = "owner"
SERVICE_ADMIN: Final = "service_admin"
REASONS: Final = (GRANT, OWNER, SERVICE_ADMIN)

DIRECT: Final = "direct"
GROUP: Final = "group"

#: One row: the values of :data:`COLUMNS`, in order.
Row = tuple[str | None, ...]


def sort_key(row: Row) -> tuple[str, ...]:
    """The order rows are written in (and compared in): each column as a string."""
    return tuple("" if v is None else v for v in row)


__all__ = [
    "COLUMNS",
    "DIRECT",
    "GRANT",
    "GROUP",
    "OWNER",
    "REASONS",
    "REQUIRED",
    "SERVICE_ADMIN",
    "Row",
    "sort_key",
]
