"""How the model's schemas and tables are named in Ranger's Hive service. Pure.

Hive keeps database and table names in lower case, and Ranger's Hive resources ignore
case: a policy on ``table=Orders`` is the table ``orders``, and so are the model's
``Orders``, ``ORDERS`` and ``orders``. So the tables of a schema are taken in groups of
names equal but for case; the group's one Ranger resource gets, per access, the users
allowed on every table of the group, and on the table Hive holds (its lower-case name)
when the model does not name that one (it then decides like any table of the schema):
narrower for a table that allows more than its twins, with a note.

A name holding a character Ranger gives a meaning (``*``, ``?``; the ``{``, ``}`` and
``\\`` of its ``{USER}`` tokens) cannot be a resource: such a table gets nothing, and its
schema no every-table policy (it would reach the table). A schema named so, one equal to
another but for case, or one with capitals whose subtree carries grants or owners of its
own (the database Hive holds is the lower-case one, which the model decides otherwise)
gets nothing at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_ranger.compile.naming import exact

T = SecurableType


@dataclass
class TableNames:
    """The Ranger names of one schema's tables."""

    #: table -> its group's Ranger resource value (absent: the table gets nothing)
    resource: dict[ObjectRef, str] = field(default_factory=dict)
    #: resource value -> the model's tables it stands for
    twins: dict[str, list[ObjectRef]] = field(default_factory=dict)
    #: resource values whose lower-case table the model does not name
    open: set[str] = field(default_factory=set)
    #: tables Ranger cannot name at all
    unnamed: list[str] = field(default_factory=list)

    @property
    def wildcard(self) -> bool:
        """Whether the every-table policy is exact (no table it would wrongly reach)."""
        return not self.unnamed

    @classmethod
    def of(cls, tables: Iterable[ObjectRef]) -> TableNames:
        out = cls()
        groups: dict[str, list[ObjectRef]] = {}
        for table in tables:
            name = table.names[-1]
            if exact(name):
                groups.setdefault(name.casefold(), []).append(table)
            else:
                out.unnamed.append(name)
        for members in groups.values():
            names = sorted({m.names[-1] for m in members}, key=lambda n: (n != n.lower(), n))
            chosen = names[0]
            if any(n.lower() != chosen.lower() for n in names):  # not one name to Ranger either
                out.unnamed += names
                continue
            out.twins[chosen] = members
            out.resource.update((m, chosen) for m in members)
            if chosen != chosen.lower():
                out.open.add(chosen)
        return out

    def notes(self, schema: ObjectRef) -> list[str]:
        out: list[str] = []
        if self.unnamed:
            out.append(
                f"{schema}: Ranger cannot name tables {', '.join(sorted(self.unnamed))} exactly "
                "(a * or ?, a {, } or \\ of Ranger's tokens); they get nothing, the others per-table "
                "items, no every-table policy (narrower)"
            )
        # only the groups noted are sorted (a kept database's 1,000 tables are not, every compile)
        noted = [(c, m) for c, m in self.twins.items() if len(m) > 1 or c in self.open]
        for chosen, members in sorted(noted):
            listed = ", ".join(sorted({m.names[-1] for m in members} | {chosen.lower()}))
            out.append(
                f"{schema}: tables {listed} are one Hive table ({chosen.lower()}; Hive and "
                "Ranger ignore case): each access goes to the users allowed it on all (narrower)"
            )
        return out


def unnamable_schemas(schemas: list[ObjectRef], model: Model) -> dict[ObjectRef, str]:
    """The schemas that get nothing, and why."""
    out: dict[ObjectRef, str] = {}
    folded: dict[str, list[ObjectRef]] = {}
    for schema in schemas:
        name = schema.names[1]
        if not exact(name):
            out[schema] = "Ranger cannot name it exactly (a * or ?, a {, } or \\ of Ranger's tokens)"
        else:
            folded.setdefault(name.casefold(), []).append(schema)
    for same in folded.values():
        if len(same) > 1:
            for schema in same:
                out[schema] = "a schema equal to another but for case (Hive and Ranger ignore case)"
    capitalised = [s for s in schemas if s not in out and s.names[1] != s.names[1].lower()]
    if capitalised:
        carrying = {o.ancestor(T.SCHEMA) for o in {*model.by_object, *model.owners}}
        for schema in capitalised:
            if schema in carrying:
                out[schema] = (
                    f"Hive holds it as database {schema.names[1].lower()}, which the model decides "
                    "otherwise (its grants or owners are on the capitalised name)"
                )
    return out
