"""The reference's "API required conditions" table, held as data.

Each :class:`Operation` names its target kind and a requirement built from a handful
of terms. The evaluator interprets the terms; nothing here decides anything. Where
the reference's wording is ambiguous the choice is written next to the row.

Terms:
- ``Owner(levels)``: the user owns the target or its ancestor of one of these types.
- ``Has(privileges)``: one of the privileges is effectively ALLOWed on the target's
  path (an ALLOW on it or an ancestor, and no DENY of that privilege anywhere on the
  path). ``on="other"`` checks the operation's second object instead.
- ``Can(op, at)``: the user may perform ``op`` on the target's ancestor of type ``at``
  (the "first, you should have the privilege to load the catalog" gates).
- ``Loadable(on)``: the user may load that object (load table, get tag, …).
- ``AllOf`` / ``AnyOf``; ``ServiceAdmin``; ``InMetalake``; ``Himself``; ``MemberOf``;
  ``HoldsRole``; ``Ordinary`` (the target user is neither a service admin nor the
  metalake's owner).
"""

from __future__ import annotations

from dataclasses import dataclass

from pushdown.model.privileges import Privilege as P
from pushdown.model.securables import SecurableType as T


@dataclass(frozen=True)
class Owner:
    levels: tuple[T, ...]
    on: str = "target"


@dataclass(frozen=True)
class Has:
    privileges: tuple[P, ...]
    on: str = "target"


@dataclass(frozen=True)
class Can:
    operation: str
    at: T


@dataclass(frozen=True)
class Loadable:
    on: str = "target"


@dataclass(frozen=True)
class AllOf:
    terms: tuple[Term, ...]


@dataclass(frozen=True)
class AnyOf:
    terms: tuple[Term, ...]


@dataclass(frozen=True)
class ServiceAdmin:
    pass


@dataclass(frozen=True)
class InMetalake:
    pass


@dataclass(frozen=True)
class Himself:
    """The target is the user's own user entry."""


@dataclass(frozen=True)
class MemberOf:
    """The target is a group the user belongs to."""


@dataclass(frozen=True)
class Ordinary:
    """The target is a user who is neither a service admin nor the metalake's owner:
    removing one would strip him of that (service admins are server administration, as in
    Gravitino, where they are the server's configuration; the metalake's owner holds it)."""


@dataclass(frozen=True)
class HoldsRole:
    """The target is a role granted to the user (directly or through a group)."""


Term = (
    Owner
    | Has
    | Can
    | Loadable
    | AllOf
    | AnyOf
    | ServiceAdmin
    | InMetalake
    | Himself
    | MemberOf
    | HoldsRole
    | Ordinary
)


@dataclass(frozen=True)
class Operation:
    """One row of the table: an API operation, its target and what it requires.

    ``target`` is a securable type, or ``"user"``/``"group"`` for operations on
    principals. ``other`` is the type of a second object the operation involves
    (``"object"`` for any data object). ``lists`` names the per-item operation that
    filters a listing's results.
    """

    name: str
    target: T | str
    requires: Term
    api: str
    other: T | str | None = None
    lists: str | None = None


M, C, S = T.METALAKE, T.CATALOG, T.SCHEMA
OWN_M = Owner((M,))
GATES = (Can("load_catalog", C), Can("load_schema", S))


def _owner_or(levels: tuple[T, ...], *privs: P) -> AnyOf:
    return AnyOf((Owner(levels), Has(privs)))


def _leaf_rows(kind: T, create: P, write: P | None, reads: tuple[P, ...]) -> list[Operation]:
    """Create / alter / drop / list / load for a table, topic, fileset or model."""
    word = kind.value
    everyone = (kind, S, C, M)
    alter = AnyOf((Owner(everyone), Has((write,)))) if write else Owner(everyone)
    return [
        Operation(f"create_{word}", kind, AllOf((*GATES, _owner_or((M, C, S), create))), f"create {word}"),
        Operation(f"alter_{word}", kind, AllOf((*GATES, alter)), f"alter {word}"),
        Operation(f"drop_{word}", kind, AllOf((*GATES, Owner(everyone))), f"drop {word}"),
        Operation(f"list_{word}s", S, AllOf(GATES), f"list {word}", lists=f"load_{word}"),
        Operation(f"load_{word}", kind, AllOf((*GATES, _owner_or(everyone, *reads))), f"load {word}"),
    ]


def _same_as(name: str, api: str, row: Operation) -> Operation:
    return Operation(name, row.target, row.requires, api, row.other, row.lists)


def _rows() -> list[Operation]:
    rows = [
        Operation("create_metalake", M, ServiceAdmin(), "create metalake"),
        Operation("load_metalake", M, InMetalake(), "load metalake"),
        Operation("alter_metalake", M, OWN_M, "alter metalake"),
        Operation("drop_metalake", M, OWN_M, "drop metalake"),
        Operation("create_catalog", C, _owner_or((M,), P.CREATE_CATALOG), "create catalog"),
        Operation("alter_catalog", C, Owner((C, M)), "alter catalog"),
        Operation("drop_catalog", C, Owner((C, M)), "drop catalog"),
        Operation("list_catalogs", M, InMetalake(), "list catalog", lists="load_catalog"),
        Operation("load_catalog", C, _owner_or((M, C), P.USE_CATALOG), "load catalog"),
        Operation(
            "create_schema",
            S,
            AnyOf((AllOf((Has((P.CREATE_SCHEMA,)), Has((P.USE_CATALOG,)))), Owner((M, C)))),
            "create schema",
        ),
        Operation("alter_schema", S, AllOf((GATES[0], Owner((S, C, M)))), "alter schema"),
        Operation("drop_schema", S, AllOf((GATES[0], Owner((S, C, M)))), "drop schema"),
        Operation("list_schemas", C, GATES[0], "list schema", lists="load_schema"),
        Operation("load_schema", S, AllOf((GATES[0], _owner_or((M, C, S), P.USE_SCHEMA))), "load schema"),
    ]
    T_ = T.TABLE
    table = _leaf_rows(T_, P.CREATE_TABLE, P.MODIFY_TABLE, (P.SELECT_TABLE, P.MODIFY_TABLE))
    rows += table
    by_name = {r.name: r for r in rows}
    for stat in (
        "update_table_statistics",
        "drop_table_statistics",
        "update_table_partition_statistics",
        "drop_table_partition_statistics",
    ):
        rows.append(_same_as(stat, stat.replace("_", " "), by_name["alter_table"]))
    for stat in ("list_table_statistics", "list_table_partition_statistics"):
        rows.append(_same_as(stat, stat.replace("_", " "), by_name["load_table"]))
    rows += _leaf_rows(T.TOPIC, P.CREATE_TOPIC, P.PRODUCE_TOPIC, (P.CONSUME_TOPIC, P.PRODUCE_TOPIC))
    filesets = _leaf_rows(T.FILESET, P.CREATE_FILESET, P.WRITE_FILESET, (P.READ_FILESET, P.WRITE_FILESET))
    rows += filesets
    # The reference lists "list fileset" twice; the second row carries load-fileset
    # conditions on one fileset, which is listing the files inside a fileset.
    rows.append(_same_as("list_fileset_files", "list fileset (files of one fileset)", filesets[-1]))
    # Not API operations: what a backend's data access needs. Loading a topic or fileset
    # passes with PRODUCE_TOPIC / WRITE_FILESET too, but Kafka's consume and HDFS's read give
    # the data itself: only CONSUME_TOPIC / READ_FILESET (or an owner's rights) may, so a
    # DENY of them is never lost through the other privilege.
    for kind, read in ((T.TOPIC, P.CONSUME_TOPIC), (T.FILESET, P.READ_FILESET)):
        data = AllOf((*GATES, _owner_or((kind, S, C, M), read)))
        rows.append(Operation(f"read_{kind.value}_data", kind, data, f"read {kind.value} data (enforcement)"))
    rows += _model_rows()
    rows += _principal_rows()
    rows += _metalake_object_rows()
    rows.append(Operation("get_credential", "object", Loadable(), "get credential"))
    return rows


def _model_rows() -> list[Operation]:
    everyone = (T.MODEL, S, C, M)
    rows = _leaf_rows(T.MODEL, P.REGISTER_MODEL, None, (P.USE_MODEL,))
    rows[0] = Operation("register_model", T.MODEL, rows[0].requires, "register model")
    load = rows[-1]
    link = AllOf((*GATES, Can("load_model", T.MODEL), _owner_or(everyone, P.LINK_MODEL_VERSION)))
    rows.append(Operation("link_model_version", T.MODEL, link, "link model version"))
    for name in ("list_model_versions", "load_model_version", "load_model_version_by_alias"):
        rows.append(_same_as(name, name.replace("_", " "), load))
    owner_only = AllOf((*GATES, Owner(everyone)))
    for name in ("delete_model_version", "alter_model_version", "delete_model_version_alias"):
        rows.append(Operation(name, T.MODEL, owner_only, name.replace("_", " ")))
    return rows


def _principal_rows() -> list[Operation]:
    users = _owner_or((M,), P.MANAGE_USERS)
    groups = _owner_or((M,), P.MANAGE_GROUPS)
    grants = AnyOf((Has((P.MANAGE_GRANTS,)), OWN_M))
    role = T.ROLE
    return [
        Operation("add_user", "user", users, "add user"),
        # a service admin or the metalake's owner is removed (and so loses the status) only
        # by a service admin
        Operation("remove_user", "user", AllOf((users, AnyOf((Ordinary(), ServiceAdmin())))), "remove user"),
        Operation("get_user", "user", AnyOf((*users.terms, Himself())), "get user"),
        Operation("list_users", M, InMetalake(), "list users", lists="get_user"),
        Operation("add_group", "group", groups, "add group"),
        Operation("remove_group", "group", groups, "remove group"),
        Operation("get_group", "group", AnyOf((*groups.terms, MemberOf())), "get group"),
        Operation("list_groups", M, InMetalake(), "list groups", lists="get_group"),
        Operation("create_role", role, _owner_or((M,), P.CREATE_ROLE), "create role"),
        Operation("delete_role", role, Owner((M, role)), "delete role"),
        Operation("get_role", role, AnyOf((*grants.terms, Owner((role,)), HoldsRole())), "get role"),
        Operation("list_roles", M, InMetalake(), "list roles", lists="get_role"),
        # The table asks MANAGE_GRANTS on the metalake; the metalake's owner may too: owners
        # hold the management privileges implicitly, and the reference's own workflow has
        # the metalake's owner (Manager) grant catalog_manager to Staff.
        Operation("grant_role", role, grants, "grant role"),
        Operation("revoke_role", role, grants, "revoke role"),
        Operation(
            "grant_privilege",
            "securable",
            AnyOf((Has((P.MANAGE_GRANTS,)), Owner(()))),
            "grant privilege",
        ),
        Operation(
            "revoke_privilege",
            "securable",
            AnyOf((Has((P.MANAGE_GRANTS,)), Owner(()))),
            "revoke privilege",
        ),
        Operation("set_owner", "securable", Owner(()), "set owner"),
    ]


_PLURAL = {"policy": "policies"}


def _metalake_object_rows() -> list[Operation]:
    rows: list[Operation] = []
    for kind, create, use, get, extra in (
        (T.TAG, P.CREATE_TAG, P.APPLY_TAG, "get_tag", ("alter_tag", "delete_tag")),
        (
            T.POLICY,
            P.CREATE_POLICY,
            P.APPLY_POLICY,
            "get_policy",
            ("alter_policy", "set_policy", "delete_policy"),
        ),
        (
            T.JOB_TEMPLATE,
            P.REGISTER_JOB_TEMPLATE,
            P.USE_JOB_TEMPLATE,
            "get_job_template",
            ("delete_job_template", "alter_job_template"),
        ),
    ):
        word = kind.value
        words = _PLURAL.get(word, word + "s")
        create_name = "register_job_template" if kind is T.JOB_TEMPLATE else f"create_{word}"
        rows += [
            Operation(f"list_{words}", M, InMetalake(), f"list {words}", lists=get),
            Operation(create_name, kind, _owner_or((M,), create), create_name.replace("_", " ")),
            Operation(get, kind, _owner_or((M, kind), use), get.replace("_", " ")),
        ]
        rows += [Operation(n, kind, Owner((M, kind)), n.replace("_", " ")) for n in extra]
    for word, get, use in (("tag", "get_tag", P.APPLY_TAG), ("policy", "get_policy", P.APPLY_POLICY)):
        kind = T(word)
        words = _PLURAL.get(word, word + "s")
        rows += [
            Operation(
                f"list_objects_for_{word}", kind, Can(get, kind), f"list objects for {word}", lists="load"
            ),
            Operation(
                f"list_{words}_for_object", "object", Loadable(), f"list {words} for object", lists=get
            ),
            Operation(
                f"get_{word}_for_object",
                "object",
                AllOf((Loadable(), Loadable("other"))),
                f"get {word} for object",
                other=kind,
            ),
            Operation(
                f"associate_object_{words}",
                "object",
                AllOf((Has((use,), on="other"), Loadable())),
                f"associate object {words}",
                other=kind,
            ),
        ]
    job = T.JOB
    rows += [
        Operation("list_jobs", M, InMetalake(), "list jobs", lists="get_job"),
        Operation(
            "run_job",
            T.JOB_TEMPLATE,
            AnyOf((OWN_M, AllOf((Has((P.RUN_JOB,)), Has((P.USE_JOB_TEMPLATE,)))))),
            "run a job",
        ),
        Operation("get_job", job, Owner((M, job)), "get a job"),
        Operation("cancel_job", job, Owner((M, job)), "cancel a job"),
    ]
    return rows


OPERATIONS: dict[str, Operation] = {row.name: row for row in _rows()}

#: The operation that loads an object of each type (what ``Loadable`` means).
LOAD_OPERATION: dict[T, str] = {
    M: "load_metalake",
    C: "load_catalog",
    S: "load_schema",
    T.TABLE: "load_table",
    T.TOPIC: "load_topic",
    T.FILESET: "load_fileset",
    T.MODEL: "load_model",
    T.ROLE: "get_role",
    T.TAG: "get_tag",
    T.POLICY: "get_policy",
    T.JOB_TEMPLATE: "get_job_template",
    T.JOB: "get_job",
}
