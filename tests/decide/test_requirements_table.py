"""The reference's "API required conditions" table, one case per row, written from the text.

Every case names an operation, its target, the sets of facts that must be ALLOWED
(the required condition, and nothing more) and the sets that must be DENIED (the
condition missing, a gate missing, the right privilege on the wrong object…). The
user under test is ``u``; everything else in the world is created and owned by
``admin``, and the metalake is owned by ``mlo``.

Facts are space-separated tokens:

- ``PRIV@type:name`` an ALLOW of ``PRIV`` on that object in a role granted to ``u``;
  ``!PRIV@…`` the same as a DENY; ``@metalake`` names the metalake.
- ``own@type:name`` ``u`` owns that object.
- ``admin`` ``u`` is a service admin; ``absent`` ``u`` is not in the metalake.
- ``member`` ``u`` is in group ``g``; ``holds`` ``u`` holds role ``r``;
  ``gholds`` ``u`` holds role ``r`` through group ``g``.
- ``UC`` / ``US`` shorthand for USE_CATALOG on catalog ``c`` / USE_SCHEMA on schema ``c.s``
  (the "first, you should have the privilege to load the catalog and the schema" gates).

Two interpretation choices follow ``pushdown/requirements.py``'s comments: list
operations are gated (being in the metalake, or the "first…" loads) and their result is
then filtered by the per-item operation; the reference's second "list fileset" row
(which carries load-fileset conditions) is ``list_fileset_files``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pushdown.decide import listing
from pushdown.decide.evaluator import Evaluator
from pushdown.decide.requirements import OPERATIONS
from pushdown.model.privileges import Condition
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from tests.builders import Builder

BASE_OBJECTS = (
    "catalog:c",
    "catalog:c2",
    "schema:c.s",
    "schema:c.s2",
    "table:c.s.t",
    "table:c.s.t2",
    "topic:c.s.tp",
    "topic:c.s.tp2",
    "fileset:c.s.f",
    "fileset:c.s.f2",
    "model:c.s.m",
    "model:c.s.m2",
    "tag:tg",
    "tag:tg2",
    "policy:pol",
    "policy:pol2",
    "job_template:jt",
    "job_template:jt2",
    "job:j",
    "job:j2",
)
MACROS = {"UC": "USE_CATALOG@catalog:c", "US": "USE_SCHEMA@schema:c.s"}


def ref(text: str) -> ObjectRef | str:
    """``"table:c.s.t"`` -> an ObjectRef, ``"metalake"`` -> the metalake, else a principal name."""
    if text == "metalake":
        return METALAKE
    if ":" not in text:
        return text
    kind, _, name = text.partition(":")
    return ObjectRef.of(kind, name)


def build(facts: str) -> Model:
    tokens = [MACROS.get(t, t) for t in facts.split()]
    w = Builder().users("admin", "mlo", "v", *(() if "absent" in tokens else ("u",))).owner(METALAKE, "mlo")
    for text in BASE_OBJECTS:
        obj = ref(text)
        w.create(obj, "admin", {"backend": "x"} if obj.type is SecurableType.CATALOG else {})
    w.group("g", "v").group("g2", "v")
    for role in ("r", "r2", "mine"):
        w.role(role, owner="admin")
    if "absent" not in tokens:
        w.grant_role("mine", users=["u"])
    for tok in tokens:
        if tok == "absent":
            continue
        if tok == "admin":
            w.admins("u")
        elif tok == "member":
            w.member("g", "u")
        elif tok == "holds":
            w.grant_role("r", users=["u"])
        elif tok == "gholds":
            w.member("g", "u").grant_role("r", groups=["g"])
        elif tok.startswith("own@"):
            w.owner(ref(tok[4:]), "u")
        else:
            priv, _, where = tok.lstrip("!").partition("@")
            w.grant("mine", ref(where), [priv], Condition.DENY if tok.startswith("!") else Condition.ALLOW)
    return w.model


@dataclass(frozen=True)
class Case:
    op: str
    target: str
    allow: tuple[str, ...]
    deny: tuple[str, ...]
    other: str | None = None


def case(op: str, target: str, allow: list[str], deny: list[str], other: str | None = None) -> Case:
    return Case(op, target, tuple(allow), tuple(deny), other)


def same(ops: list[str], c: Case) -> list[Case]:
    """Rows of the reference whose text is identical to another row's."""
    return [Case(op, c.target, c.allow, c.deny, c.other) for op in ops]


OWNERS_OF_METALAKE_ONLY = (
    ["own@metalake"],
    ["admin", "CREATE_CATALOG@metalake USE_CATALOG@metalake", "own@catalog:c"],
)
LIST_IN_METALAKE = (["", "own@metalake"], ["absent"])


LEAF_NAMES = {"table": "t", "topic": "tp", "fileset": "f", "model": "m"}


def leaf(kind: str, create: str, write: str | None, reads: tuple[str, ...]) -> list[Case]:
    """create / alter / drop / list / load of a table, topic, fileset or model (same wording)."""
    o = f"{kind}:c.s.{LEAF_NAMES[kind]}"
    r0 = reads[0]
    owners = [f"UC US own@{o}", "UC own@schema:c.s", "own@catalog:c", "own@metalake"]
    no_gate = [f"own@{o}", f"UC own@{o}", f"US own@{o}"]
    create_op = "register_model" if kind == "model" else f"create_{kind}"
    alter_allow = [f"UC US {write}@{where}" for where in (o, "schema:c.s", "metalake")] if write else []
    not_enough = [f"UC US {p}@{o}" for p in (*reads, write) if p] + [f"UC US {create}@schema:c.s"]
    return [
        case(
            create_op,
            f"{kind}:c.s.new",
            [
                f"UC US {create}@schema:c.s",
                f"UC US {create}@catalog:c",
                f"UC US {create}@metalake",
                "UC own@schema:c.s",
                "own@catalog:c",
                "own@metalake",
            ],
            [
                f"{create}@schema:c.s",
                f"UC {create}@schema:c.s",
                f"US {create}@schema:c.s",
                "own@schema:c.s",
                "UC US",
                f"UC US {create}@schema:c.s2",
                f"UC US own@{o}",
                f"UC US {create}@schema:c.s !{create}@catalog:c",
            ],
        ),
        case(
            f"alter_{kind}",
            o,
            alter_allow + owners,
            [
                *no_gate,
                f"UC US {r0}@{o}",
                f"UC US {create}@schema:c.s",
                *([f"{write}@{o}", f"UC {write}@{o}", f"UC US {write}@schema:c.s2"] if write else []),
            ],
        ),
        case(f"drop_{kind}", o, owners, [*no_gate, *not_enough, f"UC US {(write or r0)}@metalake"]),
        case(
            f"list_{kind}s",
            "schema:c.s",
            [
                "UC US",
                "UC USE_SCHEMA@catalog:c",
                "USE_CATALOG@metalake USE_SCHEMA@metalake",
                "UC own@schema:c.s",
                "own@catalog:c",
            ],
            ["UC", "US", "own@schema:c.s", f"{r0}@schema:c.s", "UC USE_SCHEMA@schema:c.s2"],
        ),
        case(
            f"load_{kind}",
            o,
            [
                *(f"UC US {p}@{o}" for p in reads),
                f"UC US {r0}@catalog:c",
                f"UC US {reads[-1]}@metalake",
                *owners,
            ],
            [
                *no_gate,
                f"{r0}@{o}",
                f"UC {r0}@{o}",
                f"US {r0}@{o}",
                "UC US",
                f"UC US {create}@schema:c.s",
                f"UC US {r0}@schema:c.s2",
                f"UC US {r0}@{o} !{r0}@schema:c.s",
            ],
        ),
    ]


TABLE = leaf("table", "CREATE_TABLE", "MODIFY_TABLE", ("SELECT_TABLE", "MODIFY_TABLE"))
FILESET = leaf("fileset", "CREATE_FILESET", "WRITE_FILESET", ("READ_FILESET", "WRITE_FILESET"))
MODEL = leaf("model", "REGISTER_MODEL", None, ("USE_MODEL",))
T, M_ = "table:c.s.t", "model:c.s.m"


def meta_objects(kind: str, create_op: str, create: str, use: str, owner_ops: list[str]) -> list[Case]:
    """Tags, policies and job templates: list / create / get / owner-only rows."""
    o, o2 = {
        "tag": ("tag:tg", "tag:tg2"),
        "policy": ("policy:pol", "policy:pol2"),
        "job_template": ("job_template:jt", "job_template:jt2"),
    }[kind]
    get = case(
        f"get_{kind}",
        o,
        [f"{use}@metalake", f"{use}@{o}", "own@metalake", f"own@{o}"],
        [f"{use}@{o2}", f"{create}@metalake", f"own@{o2}", f"!{use}@metalake {use}@{o}"],
    )
    owner_only = case(
        "", o, ["own@metalake", f"own@{o}"], [f"{use}@{o}", f"{use}@metalake {create}@metalake", f"own@{o2}"]
    )
    return [
        case(f"list_{'policies' if kind == 'policy' else kind + 's'}", "metalake", *LIST_IN_METALAKE),
        case(
            create_op,
            f"{kind}:new",
            [f"{create}@metalake", "own@metalake"],
            [f"{use}@metalake", f"own@{o}", f"!{create}@metalake {create}@metalake"],
        ),
        get,
        *same(owner_ops, owner_only),
    ]


def object_links(word: str, plural: str, use: str, create: str) -> list[Case]:
    """list objects for X / list Xs for object / get X for object / associate object Xs."""
    o, o2 = {"tag": ("tag:tg", "tag:tg2"), "policy": ("policy:pol", "policy:pol2")}[word]
    load = f"UC US SELECT_TABLE@{T}"
    return [
        case(
            f"list_objects_for_{word}",
            o,
            [f"{use}@{o}", f"{use}@metalake", f"own@{o}", "own@metalake"],
            [f"{use}@{o2}", load, f"{create}@metalake"],
        ),
        case(
            f"list_{plural}_for_object",
            T,
            [load, f"UC US own@{T}", "own@catalog:c"],
            [f"SELECT_TABLE@{T}", f"{use}@metalake", f"own@{T}", "UC US", f"own@{o}"],
        ),
        case(f"list_{plural}_for_object", "catalog:c", ["UC"], ["USE_SCHEMA@catalog:c", f"{use}@{o}"]),
        case(
            f"get_{word}_for_object",
            T,
            [f"{load} {use}@{o}", f"{load} {use}@metalake", f"{load} own@{o}", "own@metalake"],
            [load, f"{use}@{o}", f"SELECT_TABLE@{T} {use}@{o}", f"{load} {use}@{o2}"],
            other=o,
        ),
        case(
            f"associate_object_{plural}",
            T,
            [f"{load} {use}@{o}", f"{load} {use}@metalake", f"UC US MODIFY_TABLE@{T} {use}@{o}"],
            [
                load,
                f"{use}@{o}",
                f"SELECT_TABLE@{T} {use}@{o}",
                f"{load} {use}@{o2}",
                f"{load} {create}@metalake",
                f"{load} own@{o}",
                f"{load} {use}@{o} !{use}@metalake",
            ],
            other=o,
        ),
    ]


CASES: list[Case] = [
    # -- metalake and catalogs ------------------------------------------------------------
    case("create_metalake", "metalake", ["admin"], ["own@metalake", "CREATE_CATALOG@metalake"]),
    case("load_metalake", "metalake", [""], ["absent"]),
    *same(["alter_metalake", "drop_metalake"], case("", "metalake", *OWNERS_OF_METALAKE_ONLY)),
    case(
        "create_catalog",
        "catalog:new",
        ["CREATE_CATALOG@metalake", "own@metalake"],
        ["own@catalog:c", "USE_CATALOG@metalake", "!CREATE_CATALOG@metalake CREATE_CATALOG@metalake"],
    ),
    *same(
        ["alter_catalog", "drop_catalog"],
        case(
            "",
            "catalog:c",
            ["own@catalog:c", "own@metalake"],
            ["UC", "USE_CATALOG@metalake CREATE_CATALOG@metalake", "own@catalog:c2", "own@schema:c.s"],
        ),
    ),
    case("list_catalogs", "metalake", *LIST_IN_METALAKE),
    case(
        "load_catalog",
        "catalog:c",
        ["UC", "USE_CATALOG@metalake", "own@catalog:c", "own@metalake"],
        [
            "USE_CATALOG@catalog:c2",
            "USE_SCHEMA@catalog:c",
            "CREATE_SCHEMA@catalog:c",
            "own@schema:c.s",
            "own@catalog:c2",
            "USE_CATALOG@metalake !USE_CATALOG@catalog:c",
        ],
    ),
    # -- schemas --------------------------------------------------------------------------
    case(
        "create_schema",
        "schema:c.new",
        [
            "CREATE_SCHEMA@catalog:c UC",
            "CREATE_SCHEMA@metalake USE_CATALOG@metalake",
            "CREATE_SCHEMA@catalog:c USE_CATALOG@metalake",
            "own@catalog:c",
            "own@metalake",
        ],
        [
            "CREATE_SCHEMA@catalog:c",
            "UC",
            "CREATE_SCHEMA@catalog:c2 USE_CATALOG@catalog:c2",
            "CREATE_SCHEMA@catalog:c2 UC",
            "own@catalog:c2",
            "own@schema:c.s",
        ],
    ),
    *same(
        ["alter_schema", "drop_schema"],
        case(
            "",
            "schema:c.s",
            ["UC own@schema:c.s", "own@catalog:c", "own@metalake"],
            ["own@schema:c.s", "UC US", "UC US CREATE_SCHEMA@catalog:c", "UC own@schema:c.s2"],
        ),
    ),
    case(
        "list_schemas",
        "catalog:c",
        ["UC", "USE_CATALOG@metalake", "own@catalog:c"],
        ["USE_SCHEMA@catalog:c", "own@schema:c.s", "USE_CATALOG@catalog:c2"],
    ),
    case(
        "load_schema",
        "schema:c.s",
        [
            "UC US",
            "UC USE_SCHEMA@catalog:c",
            "USE_CATALOG@metalake USE_SCHEMA@metalake",
            "UC own@schema:c.s",
            "own@catalog:c",
            "own@metalake",
        ],
        ["US", "UC", "own@schema:c.s", "UC USE_SCHEMA@schema:c.s2", "UC CREATE_TABLE@schema:c.s"],
    ),
    # -- tables, topics, filesets, models ---------------------------------------------------
    *TABLE,
    *same(
        [
            "update_table_statistics",
            "drop_table_statistics",
            "update_table_partition_statistics",
            "drop_table_partition_statistics",
        ],
        TABLE[1],
    ),
    *same(["list_table_statistics", "list_table_partition_statistics"], TABLE[4]),
    *leaf("topic", "CREATE_TOPIC", "PRODUCE_TOPIC", ("CONSUME_TOPIC", "PRODUCE_TOPIC")),
    *FILESET,
    *same(["list_fileset_files"], FILESET[4]),
    # what a backend's data access needs: the read privilege itself (or an owner's rights);
    # the write privilege that also loads the object does not, and a DENY of the read wins
    *(
        case(
            f"read_{kind}_data",
            f"{kind}:c.s.{name}",
            [f"UC US {read}@{kind}:c.s.{name}", f"UC US {read}@catalog:c", f"UC US own@{kind}:c.s.{name}"],
            [
                f"UC US {write}@{kind}:c.s.{name}",
                f"UC US {write}@catalog:c {read}@catalog:c !{read}@{kind}:c.s.{name}",
                f"{read}@{kind}:c.s.{name}",
            ],
        )
        for kind, name, read, write in (
            ("topic", "tp", "CONSUME_TOPIC", "PRODUCE_TOPIC"),
            ("fileset", "f", "READ_FILESET", "WRITE_FILESET"),
        )
    ),
    *MODEL,
    case("register_model", "model:c.s.new", ["UC US CREATE_MODEL@schema:c.s"], ["CREATE_MODEL@schema:c.s"]),
    case(
        "link_model_version",
        M_,
        [
            f"UC US USE_MODEL@{M_} LINK_MODEL_VERSION@{M_}",
            "UC US USE_MODEL@schema:c.s LINK_MODEL_VERSION@catalog:c",
            f"UC US USE_MODEL@{M_} CREATE_MODEL_VERSION@{M_}",
            f"UC US own@{M_}",
            "own@catalog:c",
            "own@metalake",
        ],
        [
            f"UC US LINK_MODEL_VERSION@{M_}",
            f"UC US USE_MODEL@{M_}",
            f"USE_MODEL@{M_} LINK_MODEL_VERSION@{M_}",
            f"own@{M_}",
            f"UC US USE_MODEL@{M_} REGISTER_MODEL@schema:c.s",
            f"UC US USE_MODEL@{M_} LINK_MODEL_VERSION@model:c.s.m2",
        ],
    ),
    *same(["list_model_versions", "load_model_version", "load_model_version_by_alias"], MODEL[4]),
    *same(["delete_model_version", "alter_model_version", "delete_model_version_alias"], MODEL[2]),
    # -- users, groups, roles, grants, owners -------------------------------------------------
    *same(
        ["add_user", "remove_user"],
        case(
            "",
            "w",
            ["MANAGE_USERS@metalake", "own@metalake"],
            [
                "MANAGE_GROUPS@metalake",
                "CREATE_ROLE@metalake MANAGE_GRANTS@metalake",
                "own@catalog:c",
                "!MANAGE_USERS@metalake MANAGE_USERS@metalake",
            ],
        ),
    ),
    case("get_user", "v", ["MANAGE_USERS@metalake", "own@metalake"], ["MANAGE_GROUPS@metalake", "member"]),
    case("get_user", "u", [""], ["absent"]),
    case("list_users", "metalake", *LIST_IN_METALAKE),
    *same(
        ["add_group", "remove_group"],
        case(
            "",
            "g3",
            ["MANAGE_GROUPS@metalake", "own@metalake"],
            [
                "MANAGE_USERS@metalake",
                "CREATE_ROLE@metalake",
                "member",
                "!MANAGE_GROUPS@metalake MANAGE_GROUPS@metalake",
            ],
        ),
    ),
    case("get_group", "g", ["MANAGE_GROUPS@metalake", "own@metalake", "member"], ["MANAGE_USERS@metalake"]),
    case("get_group", "g2", ["MANAGE_GROUPS@metalake"], ["member", "gholds"]),
    case("list_groups", "metalake", *LIST_IN_METALAKE),
    case(
        "create_role",
        "role:new",
        ["CREATE_ROLE@metalake", "own@metalake"],
        ["MANAGE_GRANTS@metalake", "own@role:r", "!CREATE_ROLE@metalake CREATE_ROLE@metalake"],
    ),
    case(
        "delete_role",
        "role:r",
        ["own@role:r", "own@metalake"],
        ["CREATE_ROLE@metalake", "MANAGE_GRANTS@metalake", "holds", "gholds", "own@role:r2"],
    ),
    case(
        "get_role",
        "role:r",
        ["MANAGE_GRANTS@metalake", "own@metalake", "own@role:r", "holds", "gholds"],
        ["CREATE_ROLE@metalake", "member", "own@role:r2", "!MANAGE_GRANTS@metalake MANAGE_GRANTS@metalake"],
    ),
    case("list_roles", "metalake", *LIST_IN_METALAKE),
    *same(
        ["grant_role", "revoke_role"],
        case(
            "",
            "role:r",
            ["MANAGE_GRANTS@metalake", "own@metalake"],
            [
                "own@role:r",
                "CREATE_ROLE@metalake",
                "holds",
                "!MANAGE_GRANTS@metalake MANAGE_GRANTS@metalake",
            ],
        ),
    ),
    *same(
        ["grant_privilege", "revoke_privilege"],
        case(
            "",
            T,
            ["MANAGE_GRANTS@metalake", f"own@{T}"],
            [
                "own@schema:c.s",
                "own@metalake",
                f"UC US MODIFY_TABLE@{T} SELECT_TABLE@{T}",
                "own@table:c.s.t2",
                "!MANAGE_GRANTS@metalake MANAGE_GRANTS@metalake",
            ],
        ),
    ),
    *same(
        ["grant_privilege", "revoke_privilege"],
        case(
            "",
            "metalake",
            ["MANAGE_GRANTS@metalake", "own@metalake"],
            ["own@catalog:c", "CREATE_ROLE@metalake"],
        ),
    ),
    case(
        "set_owner",
        T,
        [f"own@{T}"],
        ["MANAGE_GRANTS@metalake", "own@schema:c.s", "own@metalake", f"UC US MODIFY_TABLE@{T}"],
    ),
    case("set_owner", "catalog:c", ["own@catalog:c"], ["own@catalog:c2", "MANAGE_GRANTS@metalake", "UC"]),
    case("set_owner", "role:r", ["own@role:r"], ["holds", "MANAGE_GRANTS@metalake", "own@role:r2"]),
    # -- tags, policies, job templates, jobs ------------------------------------------------
    *meta_objects("tag", "create_tag", "CREATE_TAG", "APPLY_TAG", ["alter_tag", "delete_tag"]),
    *meta_objects(
        "policy",
        "create_policy",
        "CREATE_POLICY",
        "APPLY_POLICY",
        ["alter_policy", "set_policy", "delete_policy"],
    ),
    *meta_objects(
        "job_template",
        "register_job_template",
        "REGISTER_JOB_TEMPLATE",
        "USE_JOB_TEMPLATE",
        ["delete_job_template", "alter_job_template"],
    ),
    *object_links("tag", "tags", "APPLY_TAG", "CREATE_TAG"),
    *object_links("policy", "policies", "APPLY_POLICY", "CREATE_POLICY"),
    case("list_jobs", "metalake", *LIST_IN_METALAKE),
    case(
        "run_job",
        "job_template:jt",
        [
            "own@metalake",
            "RUN_JOB@metalake USE_JOB_TEMPLATE@job_template:jt",
            "RUN_JOB@metalake USE_JOB_TEMPLATE@metalake",
        ],
        [
            "RUN_JOB@metalake",
            "USE_JOB_TEMPLATE@job_template:jt",
            "USE_JOB_TEMPLATE@metalake",
            "RUN_JOB@metalake USE_JOB_TEMPLATE@job_template:jt2",
            "own@job_template:jt",
            "RUN_JOB@metalake own@job_template:jt",
            "RUN_JOB@metalake USE_JOB_TEMPLATE@job_template:jt !RUN_JOB@metalake",
        ],
    ),
    *same(
        ["get_job", "cancel_job"],
        case(
            "",
            "job:j",
            ["own@metalake", "own@job:j"],
            [
                "RUN_JOB@metalake",
                "own@job:j2",
                "RUN_JOB@metalake USE_JOB_TEMPLATE@metalake",
                "own@job_template:jt",
            ],
        ),
    ),
    case(
        "get_credential",
        T,
        [f"UC US SELECT_TABLE@{T}", f"UC US own@{T}", "own@catalog:c"],
        [f"SELECT_TABLE@{T}", "UC US", f"own@{T}"],
    ),
    case(
        "get_credential",
        "fileset:c.s.f",
        ["UC US READ_FILESET@fileset:c.s.f", "UC US WRITE_FILESET@schema:c.s"],
        ["READ_FILESET@fileset:c.s.f", "UC US READ_FILESET@fileset:c.s.f2"],
    ),
    case("get_credential", "catalog:c", ["UC"], ["USE_SCHEMA@catalog:c", "own@schema:c.s"]),
]

#: Cases where the implementation contradicts the reference: (op, target, facts) -> reason.
XFAIL: dict[tuple[str, str, str], str] = {}


def _params() -> list:
    out = []
    for c in CASES:
        deny = c.deny if "" in c.allow else ("", *c.deny)
        for facts, expected in [*((f, True) for f in c.allow), *((f, False) for f in deny)]:
            marks = ()
            if (c.op, c.target, facts) in XFAIL:
                marks = (pytest.mark.xfail(strict=True, reason=XFAIL[(c.op, c.target, facts)]),)
            ident = f"{c.op}[{c.target}]{'+' if expected else '-'}[{facts or 'nothing'}]"
            out.append(pytest.param(c.op, c.target, c.other, facts, expected, id=ident, marks=marks))
    return out


@pytest.mark.parametrize(("op", "target", "other", "facts", "expected"), _params())
def test_required_conditions(op: str, target: str, other: str | None, facts: str, expected: bool) -> None:
    model = build(facts)
    decision = Evaluator(model).authorize("u", op, ref(target), None if other is None else ref(other))
    assert decision.allowed is expected, decision.explain()


def test_every_operation_has_a_case() -> None:
    covered = {c.op for c in CASES}
    missing, unknown = sorted(set(OPERATIONS) - covered), sorted(covered - set(OPERATIONS))
    assert not missing, f"operations without a test case: {missing}"
    assert not unknown, f"cases for unknown operations: {unknown}"


def test_every_case_has_an_allowed_and_a_denied_user() -> None:
    for c in CASES:
        assert c.allow, c
        assert c.deny or "" not in c.allow, c


# -- listings: gated, then filtered by the per-item operation the reference names ---------------

LISTINGS = [
    # (list operation, container, item operation, facts, visible items)
    ("list_catalogs", "metalake", "load_catalog", "UC", {"catalog:c"}),
    ("list_catalogs", "metalake", "load_catalog", "own@metalake", {"catalog:c", "catalog:c2"}),
    ("list_schemas", "catalog:c", "load_schema", "UC US", {"schema:c.s"}),
    ("list_schemas", "catalog:c", "load_schema", "own@catalog:c", {"schema:c.s", "schema:c.s2"}),
    ("list_tables", "schema:c.s", "load_table", f"UC US SELECT_TABLE@{T}", {T}),
    ("list_tables", "schema:c.s", "load_table", "UC own@schema:c.s", {T, "table:c.s.t2"}),
    ("list_topics", "schema:c.s", "load_topic", "UC US CONSUME_TOPIC@topic:c.s.tp2", {"topic:c.s.tp2"}),
    ("list_filesets", "schema:c.s", "load_fileset", "UC US READ_FILESET@fileset:c.s.f", {"fileset:c.s.f"}),
    ("list_models", "schema:c.s", "load_model", "own@catalog:c", {M_, "model:c.s.m2"}),
    ("list_users", "metalake", "get_user", "", {"u"}),
    ("list_users", "metalake", "get_user", "MANAGE_USERS@metalake", {"u", "v", "admin", "mlo"}),
    ("list_groups", "metalake", "get_group", "member", {"g"}),
    ("list_groups", "metalake", "get_group", "own@metalake", {"g", "g2"}),
    ("list_roles", "metalake", "get_role", "own@role:r2", {"mine", "r2"}),
    ("list_roles", "metalake", "get_role", "gholds", {"mine", "r"}),
    ("list_roles", "metalake", "get_role", "MANAGE_GRANTS@metalake", {"mine", "r", "r2"}),
    ("list_tags", "metalake", "get_tag", "APPLY_TAG@tag:tg", {"tag:tg"}),
    ("list_tags", "metalake", "get_tag", "own@metalake", {"tag:tg", "tag:tg2"}),
    ("list_policies", "metalake", "get_policy", "own@policy:pol2", {"policy:pol2"}),
    (
        "list_job_templates",
        "metalake",
        "get_job_template",
        "USE_JOB_TEMPLATE@job_template:jt",
        {"job_template:jt"},
    ),
    ("list_jobs", "metalake", "get_job", "own@job:j", {"job:j"}),
    ("list_jobs", "metalake", "get_job", "own@metalake", {"job:j", "job:j2"}),
]


def _items(model: Model, item_op: str, container: str) -> list[ObjectRef | str]:
    if item_op == "get_user":
        return sorted(model.users)
    if item_op == "get_group":
        return sorted(model.groups)
    if item_op == "get_role":
        return [ObjectRef.of("role", r) for r in sorted(model.roles)]
    kind = SecurableType(item_op.split("_", 1)[1])
    root = ref(container)
    return [o for o in model.objects if o.type is kind and o.is_within(root)]


def _show(item: ObjectRef | str) -> str:
    if isinstance(item, str):
        return item
    return item.names[0] if item.type is SecurableType.ROLE else f"{item.type.value}:{item.name}"


@pytest.mark.parametrize(
    ("list_op", "container", "item_op", "facts", "visible"),
    LISTINGS,
    ids=[f"{x[0]}[{x[3] or 'nothing'}]" for x in LISTINGS],
)
def test_listing_is_gated_then_filtered(
    list_op: str, container: str, item_op: str, facts: str, visible: set[str]
) -> None:
    assert OPERATIONS[list_op].lists == item_op
    model = build(facts)
    evaluator = Evaluator(model)
    assert evaluator.authorize("u", list_op, ref(container))
    seen = {_show(i) for i in _items(model, item_op, container) if evaluator.authorize("u", item_op, i)}
    assert seen == visible
    assert {_show(i) for i in listing.visible(evaluator, "u", list_op, ref(container))} == visible
