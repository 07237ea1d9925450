"""One plan operation as Ranger calls: at most one write each.

A role is created, updated or deleted by id. A policy is created when no policy holds
its resource set yet; otherwise pushdown's items in the policy there are replaced (one
update, whoever made the policy); a removal deletes the policy only when it carries
pushdown's label and nothing else is left in it, else it updates the policy without
pushdown's items. Every answer is kept (:class:`~pushdown_ranger.answers.Written`): it
is the read-back of the touched key.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pushdown.errors import PermanentBackendError
from pushdown.reconcile.plan import Op
from pushdown_ranger.accepting import implying
from pushdown_ranger.answers import Written
from pushdown_ranger.client import RangerAPI
from pushdown_ranger.compile.desired import RangerNaming
from pushdown_ranger.facts import PolicyFact, RoleFact
from pushdown_ranger.readback import foreign_items, merged, new_policy, role_json

Json = dict[str, Any]


@dataclass
class Writer:
    api: RangerAPI
    naming: RangerNaming
    label: str
    role_service: str
    policies: Mapping[tuple[str, Any], Json]
    roles: Mapping[str, Json]
    #: the snapshot's implied grants (:data:`~pushdown_ranger.snapshot.Implied`)
    implied: Any = ()
    written: Written = field(default_factory=Written)

    def write(self, op: Op) -> None:
        fact = op.fact
        if isinstance(fact, RoleFact):
            self.role(op, fact)
        else:
            assert isinstance(fact, PolicyFact)
            self.policy(op, fact)

    def role(self, op: Op, fact: RoleFact) -> None:
        raw = self.written.roles[fact.name] if fact.name in self.written.roles else self.roles.get(fact.name)
        if op.action == "remove":
            if raw is not None:
                try:
                    self.api.delete_role(int(raw["id"]), fact.name)
                except PermanentBackendError:
                    # Ranger keeps a role a policy still names (one made by hand, say): its
                    # members go first, so the refusal holds back no narrowing; then reported
                    rid = int(raw["id"])
                    self.written.role(
                        fact.name, self.api.update_role(rid, role_json(RoleFact(fact.name), rid))
                    )
                    raise
                self.written.role(fact.name, None)
        elif raw is None:
            self.written.role(fact.name, self.api.create_role(self.role_service, role_json(fact)))
        else:
            answer = self.api.update_role(int(raw["id"]), role_json(fact, int(raw["id"])))
            self.written.role(fact.name, answer)

    def policy(self, op: Op, fact: PolicyFact) -> None:
        key = (fact.service, fact.resources)
        # as this apply last wrote it (a change written in two steps), else as read
        raw = self.written.policies[key] if key in self.written.policies else self.policies.get(key)
        ours = self.naming.ours
        if op.action == "remove":
            if raw is None:
                return
            rest = merged(raw, None, ours, implying(self.implied, fact.service))
            if self.label in (raw.get("policyLabels") or ()) and not foreign_items(rest):
                self.api.delete_policy(int(raw["id"]), str(raw.get("name")))
                self.written.policy(key, None)
            else:
                self.written.policy(key, self.api.update_policy(int(raw["id"]), rest))
        elif raw is None:
            self.written.policy(key, self.create(fact))
        else:
            update = merged(raw, fact, ours, implying(self.implied, fact.service))
            self.written.policy(key, self.api.update_policy(int(raw["id"]), update))

    def create(self, fact: PolicyFact) -> Json:
        """A new policy; when its name is taken (Ranger's error 3006: a hand-made policy took
        it), the same policy under another name: a refused name never holds back a write."""
        for attempt in range(NAME_ATTEMPTS):
            salt = "" if attempt == 0 else secrets.token_hex(8)
            try:
                return self.api.create_policy(new_policy(fact, self.label, salt))
            except PermanentBackendError as exc:
                if attempt == NAME_ATTEMPTS - 1 or not name_taken(str(exc)):
                    raise
        raise AssertionError("unreachable")


#: names tried for one new policy (the first, then unpredictable ones)
NAME_ATTEMPTS = 3


def name_taken(message: str) -> bool:
    """Whether Ranger refused a policy because another one holds its name (error 3006)."""
    return "3006" in message or "already exists for this name" in message
