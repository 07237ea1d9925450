"""The entitlement compiler as a DataFrame pipeline (the same answers as the local one).

The local :class:`~pushdown.decide.compiler.EntitlementCompiler` splits a full compile by
*part* (each held catalog, and ``""`` for the metalake's own level), groups users into
*classes* per part (the roles they hold that have a grant in the part, and service-admin
status), and decides each class only on its *keys* (the objects carrying a grant of its
roles) and on stand-ins (a generic child below a key: every object that carries nothing
of its own decides like it). Owners get a personal view where they own.

Here the same steps are joins and aggregates:

1. facts as DataFrames: ``holds(user, role)``, ``grants(node, priv, cond, role)`` with
   each node's parts, ``owners(user, node)``;
2. ``relevant(part, role)``; each user's signature per part (sorted relevant roles +
   admin) -> ``classes``; their members, collected per class (compact);
3. ``keys(class, node)`` = class roles joined with the nodes their grants sit on;
   owners' personal keys (what they own in the part, and the class keys next to it);
4. questions = keys, and a stand-in child of each key (and of the metalake) for each
   operation's target type;
5. each question's path exploded by depth and joined with the class's grants (and the
   owner's ownerships), aggregated to ``allow_d`` / ``deny_d`` / ``owned_d`` per depth;
6. each operation's requirement as a column expression (:mod:`pushdown_spark.rules`);
   the driver collects, per (class, question), the operations allowed — never a
   (user x object) expansion.

The driver then wraps the collected answers in the core's own views, so backends read
the result exactly as they read the local compiler's.
"""

from __future__ import annotations

import gc
import os
import sys
import time
import warnings
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from pushdown.decide.area import Area
from pushdown.decide.compiler import Entitlements
from pushdown.decide.decider import Decider, compilable
from pushdown.decide.inventory import GENERIC, Inventory
from pushdown.decide.requirements import AllOf, AnyOf, ServiceAdmin, Term
from pushdown.decide.views import CompositeView, Keys, Owned, OwnerView, View
from pushdown.model.securables import LEAF_TYPES, METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_spark.facts import BOOL, INT, NAMES, STRING, schema, staging
from pushdown_spark.rules import DEPTHS, allow_col, deny_col, owned_col, rule, target

T = SecurableType
#: separators no model name can hold (control characters are refused in names)
TYPE_SEP, NAME_SEP, KEY_SEP = "\x1e", "\x1f", "\x1d"
_FIXED = {0: "metalake", 1: "catalog", 2: "schema"}


def node_key(obj: ObjectRef) -> str:
    return obj.type.value + TYPE_SEP + NAME_SEP.join(obj.names)


def _depth(col: Column) -> Column:
    return F.size(col)


def _prefix_key(ntype: Column, names: Column, d: Column) -> Column:
    """The key of ``path[d]`` of the node (ntype, names): its type is fixed above depth 3."""
    kind = F.when(d == 0, F.lit("metalake")).when(d == 1, "catalog").when(d == 2, "schema").otherwise(ntype)
    return F.concat(kind, F.lit(TYPE_SEP), F.concat_ws(NAME_SEP, F.slice(names, 1, d)))


@dataclass
class Counters:
    """What one compile did (for tests and the benchmark)."""

    classes: int = 0
    owner_views: int = 0
    keys: int = 0
    questions_collected: int = 0
    fallbacks: int = 0
    jobs: int = 0


class Settled(Decider):
    """A decider whose answers the pipeline computed: a lookup, not an evaluation.

    It answers every question a :class:`View` asks of it (its keys and their stand-ins);
    anything else (an operation asked of an object of another type) goes to a local
    :class:`Decider` with the same roles, so an answer is never guessed."""

    def __init__(
        self,
        model: Model,
        roles: frozenset[str],
        owned: Collection[ObjectRef],
        admin: bool,
        allowed: dict[ObjectRef, frozenset[str]],
        asked: Collection[ObjectRef],
        counters: Counters,
    ) -> None:
        super().__init__(model, roles, owned, admin)
        self.allowed = allowed
        self.asked = asked
        self.counters = counters
        self._local: Decider | None = None

    def decide(self, operation: str, node: ObjectRef) -> bool:
        if target(operation) is node.type and self._covers(node):
            ops = self.allowed.get(node)
            return ops is not None and operation in ops
        self.counters.fallbacks += 1
        return super().decide(operation, node)

    def _covers(self, node: ObjectRef) -> bool:
        """Whether ``node`` is a key or a stand-in child of a key (or of the metalake)."""
        if node in self.asked:
            return True
        names = node.names
        real = len(names)
        while real and names[real - 1] == GENERIC:
            real -= 1
        if real == len(names) or GENERIC in names[:real]:
            return False
        if real == 0:
            return True
        rep = ObjectRef(_type_of_depth(real, node.type), names[:real])
        return rep in self.asked


def _type_of_depth(depth: int, leaf: SecurableType) -> SecurableType:
    return {0: T.METALAKE, 1: T.CATALOG, 2: T.SCHEMA}.get(depth, leaf)


def _needs_admin(term: Term) -> bool:
    if isinstance(term, AllOf | AnyOf):
        return any(_needs_admin(t) for t in term.terms)
    return isinstance(term, ServiceAdmin)


def _ref(ntype: str, names: Sequence[str]) -> ObjectRef:
    return ObjectRef(SecurableType(ntype), tuple(names))


#: the namespace separator: one job compiles several (model, inventory) pairs at once,
#: each user, role and part prefixed with its compile's number
NS = "\x1c"


def ns(mid: int, name: str) -> str:
    return f"{mid}{NS}{name}"


def un(name: str) -> tuple[int, str]:
    mid, _, rest = name.partition(NS)
    return int(mid), rest


@dataclass
class Job:
    """One compile of a batch: a model, what the server holds, whom to decide for."""

    model: Model
    inventory: Inventory
    users: Collection[str] | None = None


class SparkCompile:
    """Full compiles on one session: facts in, the core's compact form out.

    Several compiles (of different models) can share one run: their facts are
    namespaced by their number, so the joins never mix them, and the run costs the
    same few Spark jobs as a single compile (what the differential tests rely on)."""

    def __init__(self, spark: SparkSession, operations: Sequence[str], staging: str | None = None) -> None:
        self.spark = spark
        self.staging = staging
        self.operations = tuple(dict.fromkeys(operations))
        self.admin_matters = any(_needs_admin(compilable(op).requires) for op in self.operations)
        self.counters = Counters()
        self.timing = bool(os.environ.get("PUSHDOWN_SPARK_TIMING"))

    def _keep(self, df: DataFrame) -> DataFrame:
        """Materialise one step (on the executors) and cut its lineage, so the steps after
        it neither recompute nor re-plan it."""
        self.counters.jobs += 1
        if self.timing:
            started = time.perf_counter()
            kept = df.localCheckpoint(eager=True)
            print(f"  step {self.counters.jobs}: {time.perf_counter() - started:.2f} s", file=sys.stderr)
            return kept
        return df.localCheckpoint(eager=True)

    # -- facts -------------------------------------------------------------------------
    def _facts(self, jobs: list[tuple[Job, list[str], list[str]]]) -> dict[str, DataFrame]:
        """The facts of every compile as one Parquet file that pyarrow writes from the
        models, a batch at a time (:mod:`pushdown_spark.facts`), and the executors read:
        neither the driver's Python nor its JVM holds them all at once."""

        def rows() -> Iterator[tuple[Any, ...]]:
            for mid, (job, users, parts) in enumerate(jobs):
                model, held = job.model, job.inventory.__contains__
                admins = model.service_admins if self.admin_matters else set()
                for u in users:
                    yield ("user", mid, ns(mid, u), None, None, None, None, None, u in admins)
                    for r in model.roles_of(u):
                        yield ("hold", None, ns(mid, u), ns(mid, r), None, None, None, None, None)
                for obj, by_priv in model.by_object.items():
                    if obj.type is not T.METALAKE and (obj.type not in _DATA or not held(obj)):
                        continue
                    names = list(obj.names)
                    for priv, conds in by_priv.items():
                        for cond, roles in conds.items():
                            for r in roles:
                                yield (
                                    "grant",
                                    mid,
                                    None,
                                    ns(mid, r),
                                    obj.type.value,
                                    names,
                                    priv.value,
                                    cond.value,
                                    None,
                                )
                wanted = set(users)
                for u, objs in model.owned_by.items():
                    if u not in wanted:
                        continue
                    for obj in objs:
                        if obj == METALAKE or (obj.type in _DATA and held(obj)):
                            yield (
                                "owner",
                                mid,
                                ns(mid, u),
                                None,
                                obj.type.value,
                                list(obj.names),
                                None,
                                None,
                                None,
                            )
                for p in parts:
                    yield ("part", mid, ns(mid, p), p, None, None, None, None, None)

        columns = schema(
            kind=STRING,
            mid=INT,
            a=STRING,
            b=STRING,
            ntype=STRING,
            names=NAMES,
            priv=STRING,
            cond=STRING,
            admin=BOOL,
        )
        with staging(self.staging) as stage:
            # read once and kept on the executors: the file can go when this step is done
            facts = self._keep(self.spark.read.parquet(stage.write("facts", columns, rows())))
        kind = F.col("kind")
        return {
            "users": facts.where(kind == "user").select("mid", F.col("a").alias("user"), "admin"),
            "holds": facts.where(kind == "hold").select(F.col("a").alias("user"), F.col("b").alias("role")),
            "grants": facts.where(kind == "grant").select(
                "mid", "ntype", "names", "priv", "cond", F.col("b").alias("role")
            ),
            "owners": facts.where(kind == "owner").select("mid", F.col("a").alias("user"), "ntype", "names"),
            "parts": facts.where(kind == "part").select(
                "mid", F.col("a").alias("part"), F.col("b").alias("raw")
            ),
        }

    # -- the pipeline --------------------------------------------------------------------
    def run(self, model: Model, inventory: Inventory, users: Collection[str] | None = None) -> Entitlements:
        return self.run_many([Job(model, inventory, users)])[0]

    def run_many(self, batch: Sequence[Job]) -> list[Entitlements]:
        jobs = self._jobs(batch)
        if not any(wanted for _, wanted, _ in jobs):
            return [self._empty(job, parts) for job, _, parts in jobs]
        members_df, found_df, answers_df = self._pipeline(jobs)
        members = _collect(members_df)
        found = _collect(found_df)
        key_rows = [row for row in found if row["pcls"] is None]
        personal_rows = [row for row in found if row["pcls"] is not None]
        answer_rows = _collect(answers_df)
        self.counters.jobs += 3
        return self._assemble(jobs, members, key_rows, personal_rows, answer_rows)

    def run_parts(
        self, model: Model, inventory: Inventory, users: Collection[str] | None = None
    ) -> Iterator[tuple[str, Entitlements]]:
        """A full compile of every held catalog in one Spark run, handed out one catalog at
        a time: each catalog's compact form (with the metalake's level, collected once) is
        collected, wrapped and yielded as the :class:`Entitlements` a compile of that
        catalog alone gives; the driver holds one catalog's at a time (the caller drops
        the previous one), never the estate's. The answers stay on the executors between
        catalogs."""
        jobs = self._jobs([Job(model, inventory, users)])
        _, wanted, parts = jobs[0]
        catalogs = parts[1:]
        if not wanted:
            for name in catalogs:
                yield name, self._empty(Job(model, _only(inventory, name), users), ["", name])
            return
        # the three kinds of rows in one table, kept on the executors: one collect per catalog
        kinds = [df.withColumn("k", F.lit(i)) for i, df in enumerate(self._pipeline(jobs))]
        compact = self._keep(
            kinds[0]
            .unionByName(kinds[1], allowMissingColumns=True)
            .unionByName(kinds[2], allowMissingColumns=True)
        )

        def collected(part: str) -> list[list[Any]]:
            by_kind: list[list[Any]] = [[], [], []]
            for row in _collect(compact.where(F.col("part") == ns(0, part))):
                by_kind[row["k"]].append(row)
            self.counters.jobs += 1
            return by_kind

        shared = collected("")
        for name in catalogs:
            mine = collected(name)
            members = shared[0] + mine[0]
            found = shared[1] + mine[1]
            key_rows = [row for row in found if row["pcls"] is None]
            personal_rows = [row for row in found if row["pcls"] is not None]
            job = Job(model, _only(inventory, name), users)
            result = self._assemble(
                [(job, wanted, ["", name])], members, key_rows, personal_rows, shared[2] + mine[2]
            )
            del members, found, key_rows, personal_rows, mine
            yield name, result[0]

    def _jobs(self, batch: Sequence[Job]) -> list[tuple[Job, list[str], list[str]]]:
        jobs: list[tuple[Job, list[str], list[str]]] = []
        for job in batch:
            model = job.model
            users = job.users
            wanted = sorted(model.users if users is None else [u for u in users if u in model.users])
            parts = ["", *sorted(c.names[0] for c in job.inventory.children(METALAKE))]
            jobs.append((job, wanted, parts))
        return jobs

    def _pipeline(
        self, jobs: list[tuple[Job, list[str], list[str]]]
    ) -> tuple[DataFrame, DataFrame, DataFrame]:
        """The compact form as three DataFrames, each with its (namespaced) ``part``: the
        members per class, the keys per class and per owner, the allowed operations per
        question. Nothing is collected here."""
        f = self._facts(jobs)
        depth = _depth(F.col("names"))
        # each grant's parts: the metalake is on every path; a catalog is in its own part
        # and in the metalake's level (as a child of it); deeper nodes in their catalog's
        g = f["grants"]
        on_top = g.where(depth == 0).join(f["parts"].select("mid", "part"), "mid")
        below = g.where(depth > 0).withColumn(
            "part",
            F.explode(
                F.when(depth == 1, F.array(F.lit(""), F.col("names")[0])).otherwise(
                    F.array(F.col("names")[0])
                )
            ),
        )
        below = below.withColumn("part", F.concat_ws(NS, F.col("mid").cast("string"), F.col("part")))
        below = below.join(f["parts"].select("part"), "part", "left_semi")
        grants = on_top.unionByName(below).withColumn(
            "key", _prefix_key(F.col("ntype"), F.col("names"), depth)
        )
        grants = self._keep(grants)
        relevant = grants.select("part", "role").distinct()
        held = f["holds"].join(relevant, "role")
        sig = (
            f["users"]
            .join(f["parts"], "mid")
            .join(held, ["user", "part"], "left")
            .groupBy("user", "part", "admin")
            .agg(F.array_sort(F.collect_list("role")).alias("roles"))
        )
        sig = sig.withColumn(
            "cls",
            F.concat_ws(
                KEY_SEP, F.col("part"), F.concat_ws(NAME_SEP, F.col("roles")), F.col("admin").cast("string")
            ),
        )
        sig = self._keep(sig)
        classes = sig.select("cls", "part", "roles", "admin").distinct()
        class_roles = classes.select("cls", "part", F.explode("roles").alias("role"))
        class_grants = class_roles.join(grants, ["part", "role"]).select(
            "cls", "key", "priv", "cond", "ntype", "names"
        )
        class_grants = self._keep(class_grants)
        keys = class_grants.select("cls", "ntype", "names").distinct()

        # owners: what each owns in each part (the area: the metalake, and held objects of
        # the catalog; at the metalake's level, the catalogs), and the class keys near it
        owners = f["owners"]
        owned = owners.join(f["parts"], "mid").where(
            (depth == 0)
            | ((F.col("raw") == "") & (depth == 1))
            | ((F.col("raw") != "") & (F.col("names")[0] == F.col("raw")))
        )
        owned = owned.select("user", "part", "ntype", "names").withColumn(
            "key", _prefix_key(F.col("ntype"), F.col("names"), depth)
        )
        owned = self._keep(owned)
        owner_parts = (
            owned.select("user", "part").distinct().join(sig.select("user", "part", "cls"), ["user", "part"])
        )
        above = (
            owned.select(
                "user",
                "part",
                F.explode(F.sequence(F.lit(0), _depth(F.col("names")))).alias("d"),
                "ntype",
                "names",
            )
            .select("user", "part", _prefix_key(F.col("ntype"), F.col("names"), F.col("d")).alias("akey"))
            .distinct()
        )
        ckeys = keys.withColumn("depth", _depth(F.col("names")))
        # class keys right below a node on a path down to something owned
        near_kids = (
            owner_parts.join(ckeys.where(F.col("depth") > 0), "cls")
            .withColumn(
                "akey",
                _prefix_key(F.col("ntype"), F.col("names"), F.col("depth") - 1),
            )
            .join(above, ["user", "part", "akey"])
            .select("user", "part", "ntype", "names")
        )
        near_top = owner_parts.join(ckeys.where(F.col("depth") == 0), "cls").select(
            "user", "part", "ntype", "names"
        )
        containers = owned.where(~F.col("ntype").isin(*[t.value for t in LEAF_TYPES])).select(
            "user", "part", F.col("key").alias("akey")
        )
        near_inside = (
            owner_parts.join(ckeys, "cls")
            .select(
                "user", "part", "ntype", "names", F.explode(F.sequence(F.lit(0), F.col("depth"))).alias("d")
            )
            .withColumn("akey", _prefix_key(F.col("ntype"), F.col("names"), F.col("d")))
            .join(containers, ["user", "part", "akey"])
            .select("user", "part", "ntype", "names")
        )
        personal = (
            owned.select("user", "part", "ntype", "names")
            .unionByName(near_kids)
            .unionByName(near_top)
            .unionByName(near_inside)
            .distinct()
            .join(owner_parts, ["user", "part"])
            .withColumn("pcls", F.concat_ws(KEY_SEP, F.lit("owner"), F.col("part"), F.col("user")))
        )
        personal = self._keep(personal)

        # the questions: each key, and a stand-in child of each key (and of the metalake)
        # for every type an operation targets, with that question's roles
        kinds = sorted({target(op) for op in self.operations}, key=lambda t: t.depth)
        kind_rows = [(k.value, k.depth) for k in kinds]
        kinds_df = self.spark.range(1).select(
            F.inline(
                F.array(*[F.struct(F.lit(t).alias("qtype"), F.lit(d).alias("qdepth")) for t, d in kind_rows])
            )
        )
        shared_nodes = keys.select("cls", "ntype", "names").unionByName(
            classes.select(
                "cls", F.lit("metalake").alias("ntype"), F.array().cast("array<string>").alias("names")
            )
        )
        personal_nodes = personal.select(
            F.col("pcls").alias("qcls"), "cls", "user", "ntype", "names"
        ).unionByName(
            personal.select(
                F.col("pcls").alias("qcls"),
                "cls",
                "user",
                F.lit("metalake").alias("ntype"),
                F.array().cast("array<string>").alias("names"),
            )
        )
        nodes = shared_nodes.select(
            F.col("cls").alias("qcls"), "cls", F.lit(None).cast("string").alias("user"), "ntype", "names"
        ).unionByName(personal_nodes)
        own = nodes.where(F.col("ntype").isin(*[k.value for k in kinds])).select(
            "qcls", "cls", "user", F.col("ntype").alias("qtype"), F.col("names").alias("qnames")
        )
        stand_ins = (
            nodes.crossJoin(F.broadcast(kinds_df))
            .where(F.col("qdepth") > _depth(F.col("names")))
            .select(
                "qcls",
                "cls",
                "user",
                "qtype",
                F.concat(
                    F.col("names"), F.array_repeat(F.lit(GENERIC), F.col("qdepth") - _depth(F.col("names")))
                ).alias("qnames"),
            )
        )
        questions = self._keep(own.unionByName(stand_ins).distinct())

        # each question's path, joined with its class's grants and its owner's ownerships
        steps = questions.select(
            "qcls",
            "cls",
            "user",
            "qtype",
            "qnames",
            F.explode(F.sequence(F.lit(0), _depth(F.col("qnames")))).alias("d"),
        ).withColumn("key", _prefix_key(F.col("qtype"), F.col("qnames"), F.col("d")))
        with_grants = steps.join(class_grants.select("cls", "key", "priv", "cond"), ["cls", "key"], "left")
        with_owned = with_grants.join(
            owners.select(
                "user",
                _prefix_key(F.col("ntype"), F.col("names"), _depth(F.col("names"))).alias("key"),
                F.lit(True).alias("owns"),
            ),
            ["user", "key"],
            "left",
        )
        aggs: list[Column] = []
        for level in DEPTHS:
            upto = F.col("d") <= level
            aggs.append(
                F.collect_set(F.when(upto & (F.col("cond") == "ALLOW"), F.col("priv"))).alias(
                    allow_col(level)
                )
            )
            aggs.append(
                F.collect_set(F.when(upto & (F.col("cond") == "DENY"), F.col("priv"))).alias(deny_col(level))
            )
            aggs.append(
                F.coalesce(
                    F.max(F.when((F.col("d") == level) & F.col("owns"), F.lit(True))), F.lit(False)
                ).alias(owned_col(level))
            )
        decided = with_owned.groupBy("qcls", "cls", "qtype", "qnames").agg(*aggs)
        decided = decided.join(classes.select("cls", "admin"), "cls")
        ops = F.array(
            *[F.when((F.col("qtype") == target(op).value) & rule(op), F.lit(op)) for op in self.operations]
        )
        answers = decided.select(
            "qcls", "qtype", "qnames", F.filter(ops, lambda x: x.isNotNull()).alias("ops")
        )
        answers = answers.where(F.size("ops") > 0)

        # the compact form: members per class, keys per class, allowed ops per question
        members = sig.groupBy("cls", "part", "roles", "admin").agg(F.collect_list("user").alias("users"))
        cls_part = F.substring_index(F.col("cls"), KEY_SEP, 1)
        nodes_found = keys.select(
            F.lit(None).cast("string").alias("pcls"),
            cls_part.alias("part"),
            F.lit(None).cast("string").alias("user"),
            "cls",
            "ntype",
            "names",
        ).unionByName(personal.select("pcls", "part", "user", "cls", "ntype", "names"))
        qcls = F.col("qcls")
        answers = answers.withColumn(
            "part",
            F.when(qcls.startswith("owner" + KEY_SEP), F.split(qcls, KEY_SEP)[1]).otherwise(
                F.substring_index(qcls, KEY_SEP, 1)
            ),
        )
        return members, nodes_found, answers

    # -- the driver's side: the core's views over the collected answers -------------------
    def _empty(self, job: Job, parts: list[str]) -> Entitlements:
        result = Entitlements(self.operations, job.inventory, frozenset({METALAKE}))
        for part in parts:
            result.classes[part], result.owners[part] = [], {}
        return result

    def _assemble(
        self,
        jobs: list[tuple[Job, list[str], list[str]]],
        members: list[Any],
        key_rows: list[Any],
        personal_rows: list[Any],
        answer_rows: list[Any],
    ) -> list[Entitlements]:
        counters = self.counters
        keys: dict[str, set[ObjectRef]] = {}
        for row in key_rows:
            keys.setdefault(row["cls"], set()).add(_ref(row["ntype"], row["names"]))
        answers: dict[str, dict[ObjectRef, frozenset[str]]] = {}
        for row in answer_rows:
            answers.setdefault(row["qcls"], {})[_ref(row["qtype"], row["qnames"])] = frozenset(row["ops"])
        counters.questions_collected += len(answer_rows)
        counters.keys += len(key_rows)
        results = [self._empty(job, parts) for job, _, parts in jobs]
        per_part: list[dict[str, dict[str, View]]] = [{p: {} for p in parts} for _, _, parts in jobs]
        shared: dict[str, View] = {}
        for row in members:
            mid, part = un(row["part"])
            job = jobs[mid][0]
            cls = row["cls"]
            nodes = keys.get(cls, set())
            roles = frozenset(un(r)[1] for r in row["roles"])
            decider = Settled(
                job.model, roles, (), bool(row["admin"]), answers.get(cls, {}), nodes | {METALAKE}, counters
            )
            view = shared[cls] = View(
                decider, Keys.of(nodes), job.inventory, frozenset(_starts(part)), self.operations
            )
            users = [un(u)[1] for u in row["users"]]
            results[mid].classes[part].append((frozenset(users), view))
            for user in users:
                per_part[mid][part][user] = view
        personal: dict[tuple[str, str], tuple[str, str, set[ObjectRef]]] = {}
        for row in personal_rows:
            hit = personal.setdefault((row["part"], row["user"]), (row["cls"], row["pcls"], set()))
            hit[2].add(_ref(row["ntype"], row["names"]))
        areas: dict[str, Area] = {}
        for (spaced, spaced_user), (cls, pcls, nodes) in personal.items():
            mid, part = un(spaced)
            user = un(spaced_user)[1]
            job = jobs[mid][0]
            model = job.model
            base = shared[cls]
            area = areas.get(spaced)
            if area is None:
                area = areas[spaced] = Area.of(model, job.inventory, _starts(part))
            owned_here = area.owned(model, user)
            pstarts = {o for o in owned_here if o not in area.above}
            pstarts |= {s for s in area.starts if any(n in owned_here for n in s.path)}
            decider = Settled(
                model,
                base.decider.roles,
                model.owned_by.get(user, set()),
                base.decider.admin,
                answers.get(pcls, {}),
                nodes | {METALAKE},
                counters,
            )
            mine = View(decider, Keys.of(nodes), job.inventory, frozenset(pstarts), self.operations)
            owner_view = OwnerView(mine, base, Owned(owned_here))
            per_part[mid][part][user] = owner_view
            results[mid].owners[part][user] = owner_view
        counters.classes += len(shared)
        counters.owner_views += len(personal)
        for result, views, (_, wanted, parts) in zip(results, per_part, jobs, strict=True):
            for user in wanted:
                result.by_user[user] = CompositeView({p: views[p][user] for p in parts if user in views[p]})
        return results


def _collect(df: DataFrame) -> list[Any]:
    """``df.collect()``, and the local socket pyspark reads it through closed quietly (it
    is left to the garbage collector, which would warn about it later, anywhere)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        rows = df.collect()
        gc.collect()
    return rows


def _only(inventory: Inventory, catalog: str) -> Inventory:
    """The held objects of one catalog (and the metalake above it)."""
    return Inventory.of(inventory.within(ObjectRef(T.CATALOG, (catalog,))))


def _starts(part: str) -> set[ObjectRef]:
    return {ObjectRef(T.CATALOG, (part,))} if part else {METALAKE}


_DATA = frozenset({T.CATALOG, T.SCHEMA, *LEAF_TYPES})

__all__ = ["Counters", "Job", "Settled", "SparkCompile", "node_key"]
