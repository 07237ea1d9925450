"""The engine's policy index only skips policies that cannot match: decisions stay the same."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown_lab.ranger_standin.policy_evaluation import AccessRequest, ServicePolicies
from pushdown_lab.ranger_standin.servicedefs import load_service_defs

pytestmark = pytest.mark.ranger

HIVE = next(d for d in load_service_defs() if d["name"] == "hive")
NAMES = ["a", "A", "b", "ab"]
VALUES = st.sampled_from([*NAMES, "*", "a*", "?", "{USER}"])
PEOPLE = ["u1", "u2"]
GROUPS = ["g1", "public"]
ACCESSES = ["select", "update", "all"]


def _resource(values: list[str], excludes: bool) -> dict[str, Any]:
    return {"values": sorted(set(values)), "isExcludes": excludes}


@st.composite
def _policy(draw: st.DrawFn, pid: int) -> dict[str, Any]:
    levels = draw(st.sampled_from([["database"], ["database", "table"], ["database", "table", "column"]]))
    resources = {
        name: _resource(draw(st.lists(VALUES, min_size=1, max_size=2)), draw(st.booleans()))
        for name in levels
    }

    def items() -> list[dict[str, Any]]:
        return draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "accesses": st.lists(st.sampled_from(ACCESSES), min_size=1, max_size=2).map(
                            lambda xs: [{"type": x, "isAllowed": True} for x in xs]
                        ),
                        "users": st.lists(st.sampled_from([*PEOPLE, "{OWNER}"]), max_size=1),
                        "groups": st.lists(st.sampled_from(GROUPS), max_size=1),
                        "roles": st.lists(st.sampled_from(["r1"]), max_size=1),
                    }
                ),
                max_size=2,
            )
        )

    return {
        "id": pid,
        "name": f"p{pid}",
        "resources": resources,
        "policyItems": items(),
        "denyPolicyItems": items(),
        "policyPriority": draw(st.sampled_from([0, 0, 1])),
        "isDenyAllElse": draw(st.booleans()),
        "isAuditEnabled": draw(st.booleans()),
    }


@st.composite
def _case(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[AccessRequest]]:
    policies = [draw(_policy(pid)) for pid in range(draw(st.integers(1, 6)))]
    requests = []
    for _ in range(8):
        depth = draw(st.integers(1, 3))
        resource = dict(
            zip(
                ["database", "table", "column"],
                draw(st.lists(st.sampled_from(NAMES), min_size=depth, max_size=depth)),
                strict=False,
            )
        )
        requests.append(
            AccessRequest(
                resource,
                draw(st.sampled_from(["select", "update", "drop", ""])),
                draw(st.sampled_from(PEOPLE)),
                draw(st.lists(st.sampled_from(GROUPS))),
                owner=draw(st.sampled_from([None, *PEOPLE])),
            )
        )
    return policies, requests


ROLES = [{"name": "r1", "users": [{"name": "u2"}], "groups": [], "roles": []}]


@settings(max_examples=40, deadline=None)
@given(_case())
def test_the_index_never_changes_a_decision(case: tuple[list[dict[str, Any]], list[AccessRequest]]) -> None:
    policies, requests = case
    indexed = ServicePolicies(HIVE, policies, ROLES)
    plain = ServicePolicies(HIVE, policies, ROLES, use_index=False)
    for request in requests:
        assert indexed.evaluate(request) == plain.evaluate(request), request
