"""The implied-grants check follows the change (issue 30): the compile's allow pairs that the
service definition's ``impliedGrants`` would widen are dropped by an answer moved from the
last compile's facts by the facts that differ (``_Implying``), not computed over every fact
again; so are the databases where pushdown's allow items as read imply more
(``compiling.ImpliedDatabases``, asked on every read). Counted, not timed: a policy
changed, or a role's members changed, is answered again for that policy (or those naming
the role) alone, in an estate ten times larger as well. Over random sequences of facts
(members moved, policies added, changed and gone, two roles of one name), the moved
answer equals the whole one at every step."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.reconcile.backend import Desired
from pushdown.reconcile.plan import Fact
from pushdown_ranger import compile as compile_module
from pushdown_ranger import compiling
from pushdown_ranger.compile import _implying, _implying_whole
from pushdown_ranger.facts import PolicyFact, RoleFact
from tests.adversary import histories

IMPLIED = (("hive", "alter", frozenset({"select"})), ("hive", "update", frozenset({"select", "read"})))


def table(name: str) -> tuple[tuple[str, tuple[str, ...], bool], ...]:
    return (("column", ("*",), False), ("database", ("d",), False), ("table", (name,), False))


@contextmanager
def counting_answers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[PolicyFact]]:
    answered: list[PolicyFact] = []
    answer = compile_module._implied_answer

    def counted(fact: PolicyFact, *args: Any) -> Any:
        answered.append(fact)
        return answer(fact, *args)

    with monkeypatch.context() as m:
        m.setattr(compile_module, "_implied_answer", counted)
        yield answered


def estate(size: int) -> dict[str, Fact]:
    """``size`` roles of one member each, and a policy per role allowing it select and alter."""
    facts: dict[str, Fact] = {}
    for i in range(size):
        facts[f"role {i}"] = RoleFact(f"pd_r{i}", frozenset({f"u{i}"}))
        facts[f"policy {i}"] = PolicyFact("hive", table(f"t{i}"), frozenset({(f"pd_r{i}", "select")}))
    return facts


def answered_again(size: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int, int]:
    """Policies answered again: one policy given alter, one role given a member, a policy gone."""
    compile_module._IMPLYING.clear()
    facts = estate(size)
    _implying(Desired(frozenset(facts.values())), IMPLIED)
    out: list[int] = []
    for key, fact in (
        ("policy 1", PolicyFact("hive", table("t1"), frozenset({("pd_r1", "select"), ("pd_r2", "alter")}))),
        ("role 2", RoleFact("pd_r2", frozenset({"u2", "u1"}))),
        ("policy 3", None),
    ):
        if fact is None:
            del facts[key]
        else:
            facts[key] = fact
        desired = Desired(frozenset(facts.values()))
        with counting_answers(monkeypatch) as answered:
            moved = _implying(desired, IMPLIED)
        assert moved == _implying_whole(desired, IMPLIED)
        out.append(len(answered))
    return out[0], out[1], out[2]


def test_a_changed_policy_or_role_is_answered_again_alone_in_an_estate_ten_times_larger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small, large = answered_again(100, monkeypatch), answered_again(1000, monkeypatch)
    print(f"\nimplied-grants answers (policy, role's members, policy gone): {small} / {large}")
    assert small == large
    # the changed policy; the two policies naming the role (its own, and policy 1); none
    assert small == (1, 2, 0)


ROLES = ("pd_a", "pd_b", "pd_c")
ACCESSES = ("select", "update", "alter", "read")
members = st.frozensets(st.sampled_from(("x", "y", "z")))
pairs = st.frozensets(st.tuples(st.sampled_from(ROLES), st.sampled_from(ACCESSES)), max_size=4)
roles = st.lists(st.tuples(st.sampled_from(ROLES), members), max_size=4).map(
    lambda drawn: [RoleFact(name, users) for name, users in drawn]
)
policies = st.lists(
    st.builds(
        lambda service, t, allow, deny: PolicyFact(service, table(t), allow, deny),
        st.sampled_from(("hive", "kafka")),
        st.sampled_from(("a", "b", "c")),
        pairs,
        pairs,
    ),
    max_size=5,
)
implied = st.sampled_from((IMPLIED, IMPLIED[:1], (("hive", "select", frozenset({"read"})), *IMPLIED)))


def test_the_moved_answer_over_random_facts_equals_the_whole_one() -> None:
    @settings(max_examples=histories(300), deadline=None, suppress_health_check=list(HealthCheck))
    @given(steps=st.lists(st.tuples(roles, policies, implied), min_size=1, max_size=8))
    def run(steps: list[tuple[list[RoleFact], list[PolicyFact], Any]]) -> None:
        compile_module._IMPLYING.clear()
        for role_facts, policy_facts, grants in steps:
            desired = Desired(frozenset([*role_facts, *policy_facts]), ("a note",))
            assert _implying(desired, grants) == _implying_whole(desired, grants)

    run()


# -- the read's side: the databases where pushdown's allow items as read imply more ----------


def read_side(implied: Any, facts: frozenset[Fact]) -> set[str]:
    return compiling._implying_more(SimpleNamespace(implied=implied, facts=facts), "hive")  # type: ignore[arg-type]


def test_a_read_policy_changed_is_looked_at_alone_in_an_estate_ten_times_larger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def looked(size: int) -> tuple[int, set[str]]:
        facts = estate(size)
        kept = compiling.ImpliedDatabases(None, IMPLIED, "hive")
        kept.moved(frozenset(facts.values()))
        facts["policy 1"] = PolicyFact("hive", table("t1"), frozenset({("pd_r1", "alter")}))
        calls: list[Fact] = []
        databases = compiling._implying_databases

        def counted(fact: Fact, *args: Any) -> frozenset[str]:
            calls.append(fact)
            return databases(fact, *args)

        with monkeypatch.context() as m:
            m.setattr(compiling, "_implying_databases", counted)
            found = kept.moved(frozenset(facts.values()))
        assert found == read_side(IMPLIED, frozenset(facts.values()))
        return len(calls), found

    small, large = looked(100), looked(1000)
    assert small == large == (2, {"d"})  # the policy as it was, and as it is


def test_the_read_side_moved_over_random_facts_equals_a_pass_over_every_fact() -> None:
    @settings(max_examples=histories(300), deadline=None, suppress_health_check=list(HealthCheck))
    @given(grants=implied, steps=st.lists(policies, min_size=1, max_size=8))
    def run(grants: Any, steps: list[list[PolicyFact]]) -> None:
        kept = compiling.ImpliedDatabases(None, grants, "hive")
        for policy_facts in steps:
            facts = frozenset[Fact](policy_facts)
            assert kept.moved(facts) == read_side(grants, facts)

    run()


def pairs_checked(size: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """A database's policy naming ``size`` roles (select, as every role reading it) and one
    role given alter, which implies select: the pairs checked against the implied grants
    (``_covered``) and the members' looks (``RoleFact.users`` of the allow pairs' roles)
    when one more role is given alter there (the policy moved, answered again)."""
    compile_module._IMPLYING.clear()
    roles = [RoleFact(f"pd_r{i}", frozenset({f"u{i}"})) for i in range(size)]
    base = {(f"pd_r{i}", "select") for i in range(size)}
    db = (("database", ("d",), False), ("table", ("*",), False), ("column", ("*",), False))
    before = PolicyFact("hive", db, frozenset(base | {("pd_r0", "alter")}))
    _implying(Desired(frozenset([*roles, before])), IMPLIED)
    after = PolicyFact("hive", db, frozenset(base | {("pd_r0", "alter"), ("pd_r1", "alter")}))
    desired = Desired(frozenset([*roles, after]))
    checked: list[str] = []
    covered = compile_module._covered

    def counted(role: str, *args: Any) -> bool:
        checked.append(role)
        return covered(role, *args)

    with monkeypatch.context() as m:
        m.setattr(compile_module, "_covered", counted)
        moved = _implying(desired, IMPLIED)
    assert moved == _implying_whole(desired, IMPLIED) == desired
    return len(checked), len(after.allow)


def test_a_moved_policy_checks_only_its_pairs_that_imply_more_in_an_estate_ten_times_larger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The policy answered again is checked for the pairs whose access implies another
    (alter: select), not for each of its pairs: 2 at both sizes (before, one check a pair,
    each a pass over every pair: 102 and 1,002)."""
    small, large = pairs_checked(100, monkeypatch), pairs_checked(1000, monkeypatch)
    print(f"\nimplied-grants pairs checked / pairs in the moved policy: {small} / {large}")
    assert large[1] >= 9 * small[1] > 0, (small, large)
    assert small[0] == large[0] == 2, (small, large)


# -- the index of the policies naming each role, over a focus that moves ----------------------


def database(name: str) -> tuple[tuple[str, tuple[str, ...], bool], ...]:
    return (("column", ("*",), False), ("database", (name,), False), ("table", ("*",), False))


def focus_moved(size: int) -> tuple[int, int]:
    """``size`` roles reading four databases (a policy each naming every role, one role
    given alter), compiled whole, then focused on one database after another as scoped
    syncs compile them (the facts: the roles, the focus's policy): ``d0``, ``d1``, ``d0``
    again, ``d0`` with one more role given alter, then one role given a member. The index
    steps (a pair counted in or out of the policies naming each role) and the policies
    answered over the focused compiles; each answer equals the whole one."""
    compile_module._IMPLYING.clear()
    roles = {i: RoleFact(f"pd_r{i}", frozenset({f"u{i}"})) for i in range(size)}
    base = frozenset((f"pd_r{i}", "select") for i in range(size)) | {("pd_r0", "alter")}
    policies = {d: PolicyFact("hive", database(d), base) for d in ("d0", "d1", "d2", "d3")}

    def compiled(*facts: Fact) -> int:
        desired = Desired(frozenset([*roles.values(), *facts]))
        with pytest.MonkeyPatch.context() as m, counting_answers(m) as answered:
            moved = _implying(desired, IMPLIED)
        assert moved == _implying_whole(desired, IMPLIED)
        return len(answered)

    compiled(*policies.values())
    steps, answers = compile_module.indexed, 0
    wider = PolicyFact("hive", database("d0"), base | {("pd_r1", "alter")})
    for focus in ("d0", "d1", "d0", wider, "members"):
        if focus == "members":
            roles[1] = RoleFact("pd_r1", frozenset({"u1", "u2"}))
            focus = wider
        answers += compiled(policies[focus] if isinstance(focus, str) else focus)
    return compile_module.indexed - steps, answers


def test_a_focus_moving_between_databases_moves_the_index_by_the_pairs_that_differ_ten_times_larger() -> None:
    """A database's policy names every role reading it: a scoped sync compiles one
    database, so the next one's facts hold another database's policy. The policies left
    out are kept (with their answers, while the members of the roles they name stand), so
    the index moves by the pairs that differ alone: 1 step (the pair added) at both sizes
    (before, each role of each policy gone and added: 900 and 9,000). Answered again: the
    policy with a pair more, then it again (a role it names given a member): 2 (before 4:
    each policy that came back too)."""
    small, large = focus_moved(100), focus_moved(1000)
    print(f"\nimplied-grants index steps, policies answered, a focus moving: {small} / {large}")
    assert small == large == (1, 2), (small, large)


def test_the_moved_answer_over_a_focus_moving_at_random_equals_the_whole_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Random histories of compiles each holding some of a few resource sets' policies (a
    focus moving, and back), two at times of one resource set, as they were or changed,
    with roles whose members move: the policies left out are kept (parked, a few only: the
    longest parked dropped) and come back; the moved answer equals the whole one at every
    step."""
    monkeypatch.setattr(compile_module, "_PARKED", 2)
    resources = st.sampled_from((table("a"), table("b"), database("d"), database("e")))
    policy = st.builds(lambda r, allow: PolicyFact("hive", r, allow), resources, pairs)
    step = st.tuples(st.lists(policy, max_size=4), roles)

    @settings(max_examples=histories(300), deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        grants=implied,
        pool=st.lists(policy, min_size=1, max_size=6),
        steps=st.lists(step, min_size=1, max_size=12),
        picks=st.lists(st.lists(st.integers(0, 5), max_size=3), min_size=12, max_size=12),
    )
    def run(
        grants: Any,
        pool: list[PolicyFact],
        steps: list[tuple[list[PolicyFact], list[RoleFact]]],
        picks: list[list[int]],
    ) -> None:
        compile_module._IMPLYING.clear()
        for (fresh, role_facts), pick in zip(steps, picks, strict=False):
            again = [pool[i % len(pool)] for i in pick]
            desired = Desired(frozenset([*role_facts, *fresh, *again]))
            assert _implying(desired, grants) == _implying_whole(desired, grants)

    run()
