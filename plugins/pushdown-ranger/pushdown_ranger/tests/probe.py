"""Every (user, access, resource) the backend's shapes must decide as the evaluator does,
asked of Ranger's own policy engine (the stand-in's engine held equal to it)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pushdown_lab.ranger_ground_truth import allows
from pushdown_lab.ranger_standin import Standin

from pushdown.decide.evaluator import Evaluator
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_ranger.compile.desired import hive_catalog
from pushdown_ranger.compile.fileset_paths import path_of
from pushdown_ranger.compile.objects import named_objects
from pushdown_ranger.mapping import (
    DATABASE_ACCESS,
    HDFS_ACCESS,
    KAFKA_ACCESS,
    NEW_TABLE_ACCESS,
    REPLACE_NEEDS,
    TABLE_ACCESS,
)

T = SecurableType
#: a table name no history creates: decided like any table the schema does not hold yet
UNSEEN = "unseen"

#: the operation of ``create`` asked on a table the model holds (CREATE TABLE there
#: replaces it): allowed when both are
REPLACE = f"create_table+{REPLACE_NEEDS}"

Check = tuple[str, dict[str, Any], str, str, ObjectRef]


def authorized(evaluator: Evaluator, user: str, op: str, obj: ObjectRef) -> bool:
    """The evaluator's decision of ``op`` (:data:`REPLACE`: each of its operations)."""
    return all(evaluator.authorize(user, o, obj, explain=False).allowed for o in op.split("+"))


def table_checks(model: Model, d: str, obj: ObjectRef) -> Iterator[Check]:
    """What the engines ask on table ``obj`` of database ``d``: its accesses, and ``create``
    (a new table when the model holds none of that name; else a replace)."""
    resource = {"database": d, "table": obj.names[2]}
    for access, op in TABLE_ACCESS:
        yield "hive", resource, access, op, obj
    for access, op in NEW_TABLE_ACCESS:
        yield "hive", resource, access, REPLACE if obj in model.objects else op, obj


Triple = tuple[str, str, str]


@dataclass
class Probe:
    checks: int = 0
    mismatches: list[str] = field(default_factory=list)
    #: (user, operation/access, object): the stand-in allows what the evaluator does not,
    #: and the reverse
    wider: list[Triple] = field(default_factory=list)
    narrower: list[Triple] = field(default_factory=list)


def objects(model: Model, catalog: str, extra: Iterable[ObjectRef] = ()) -> list[ObjectRef]:
    """What to ask about in ``catalog``: the registered objects, every object a grant or an
    owner names (registered or not), and the lower-case schema or table Hive holds for a
    name with capitals (the model decides it as an object of its own)."""
    root = ObjectRef(T.CATALOG, (catalog,))
    named = sorted(named_objects(model, [catalog]))
    out = dict.fromkeys([*model.within(root), *named, *(o for o in extra if o.names[0] == catalog)])
    for obj in list(out):
        if obj.type in (T.SCHEMA, T.TABLE) and obj.names[-1] != obj.names[-1].lower():
            out.setdefault(ObjectRef(obj.type, (*obj.names[:-1], obj.names[-1].lower())))
            if obj.type is T.TABLE and obj.names[1] != obj.names[1].lower():
                out.setdefault(ObjectRef(T.SCHEMA, obj.names[:2]))
    return list(out)


def checks(model: Model, catalog: str, extra: Iterable[ObjectRef] = ()) -> Iterator[Check]:
    """(service, resource, access, operation, object) for everything in ``catalog``
    (``extra``: tables created on the server only, say)."""
    hive = hive_catalog(model, [catalog]) == catalog  # else its schemas are no Hive databases
    for obj in objects(model, catalog, extra):
        if obj.type is T.SCHEMA and hive:
            d = obj.names[1]
            for access, op in DATABASE_ACCESS:
                yield "hive", {"database": d}, access, op, obj
            yield from table_checks(model, d, ObjectRef(T.TABLE, (*obj.names, UNSEEN)))
        elif obj.type is T.TABLE:
            yield from table_checks(model, obj.names[1], obj)
        elif obj.type is T.TOPIC:
            for access, op in KAFKA_ACCESS:
                yield "kafka", {"topic": obj.names[2]}, access, op, obj
        elif obj.type is T.FILESET:
            path = path_of((model.objects.get(obj) or {}).get("location", ""))
            if not path:
                continue
            for access, op in HDFS_ACCESS:
                yield "hdfs", {"path": path}, access, op, obj
                yield "hdfs", {"path": path + "/part-0"}, access, op, obj


def _asker(standin: Standin) -> Callable[[str, dict[str, Any], str, str, list[str]], bool]:
    """Ranger's decision (its own engine over the service's current policies and roles),
    the stand-in's engine held equal to it (``pushdown_lab.ranger_ground_truth``)."""
    return lambda s, r, a, u, g: allows(standin, [(s, r, a, u, g)])[0]


def probe(
    standin: Standin,
    model: Model,
    catalog: str,
    users: tuple[str, ...],
    *,
    mapped: Callable[[str], str] = str,
    groups_of: Callable[[str], list[str]] | None = None,
    extra: Iterable[ObjectRef] = (),
) -> Probe:
    """``mapped``: the Ranger name of a model user; ``groups_of``: a user's groups as the
    enforcing host resolves them (default: as the model says); ``extra``: more objects to
    ask about (tables created on the server only)."""
    out = Probe()
    evaluator = Evaluator(model)
    asked = []
    for user in users:
        groups = groups_of(user) if groups_of else sorted(model.user_groups.get(user, ()))
        asked += [(user, groups, check) for check in checks(model, catalog, extra)]
    # Ranger's engine decides the whole batch at once
    answers = allows(standin, [(s, r, a, mapped(u), g) for u, g, (s, r, a, _, _) in asked])
    for (user, _, (service, resource, access, op, obj)), got in zip(asked, answers, strict=True):
        want = user in model.users and authorized(evaluator, user, op, obj)
        out.checks += 1
        if got != want:
            line = f"{user} {access} {service}:{resource} (model {op} {obj}): {got=} {want=}"
            out.mismatches.append(line)
            # a table no schema holds yet stands for every table of its schema
            named = obj.parent if obj.names[-1] == UNSEEN and obj.parent else obj
            (out.wider if got else out.narrower).append((user, f"{op}/{access}", str(named)))
    return out
