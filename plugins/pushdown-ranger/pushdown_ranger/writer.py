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

from pushdown.errors import BackendError, PermanentBackendError
from pushdown.reconcile.plan import Op
from pushdown_ranger.accepting import implying, refused_writes
from pushdown_ranger.answers import Written
from pushdown_ranger.client import RangerAPI
from pushdown_ranger.companion import (
    MOST_SPARES,
    OVERRIDE,
    denied,
    drop_allowed,
    held_denies,
    model_denies,
    narrowing_policy,
    needed,
    restored,
    spare_forms,
    with_denies,
    with_narrows,
)
from pushdown_ranger.compile.desired import RangerNaming
from pushdown_ranger.facts import Pair, PolicyFact, RoleFact
from pushdown_ranger.readback import foreign_items, merged, new_policy, resource_key, role_json

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
    #: the narrowing policies read, by the key of the policy each narrows
    #: (:mod:`pushdown_ranger.companion`), and whether Ranger honours deny items per service
    narrowings: Mapping[tuple[str, Any], Json] = field(default_factory=dict)
    deny: Mapping[str, bool] = field(default_factory=dict)
    #: the policies read on the resource set of another (:attr:`RangerSnapshot.shadowed`)
    shadowed: tuple[Json, ...] = ()

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
        narrowing = self._narrowing(key)
        after = op.after if op.action != "remove" and isinstance(op.after, PolicyFact) else None
        if narrowing is not None:
            self.written.whole = True  # its fact is folded: read everything again
        try:
            self._policy(op, fact, key, raw)
        except PermanentBackendError as exc:
            if raw is None or not self.deny.get(fact.service, False):
                raise
            attempted = merged(raw, after, self.naming.ours, implying(self.implied, fact.service))
            if not refused_writes(attempted):
                raise
            self.narrow_beside(key, raw, narrowing, after, exc)
            return
        if narrowing is not None and drop_allowed(
            op.before if isinstance(op.before, PolicyFact) else None, after, narrowing, self.naming.ours
        ):
            self._write_narrowing(key, raw, narrowing, frozenset())

    def _policy(self, op: Op, fact: PolicyFact, key: tuple[str, Any], raw: Json | None) -> None:
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

    def narrow_beside(
        self,
        key: tuple[str, Any],
        raw: Json,
        narrowing: Json | None,
        after: PolicyFact | None,
        refused: PermanentBackendError,
    ) -> None:
        """Ranger refused the write of ``raw`` for what it must keep (a principal named null in
        a deny item, say): its narrowing goes into the narrowing policy beside it
        (:mod:`pushdown_ranger.companion`). What that cannot bring (allow items added, deny
        items taken out, narrower) fails the write as Ranger's refusal did."""
        pairs, short = needed(raw, after, self.naming.ours)
        denies = held_denies(raw, after, self.naming.ours) & pairs
        self.written.whole = True
        why = _said(refused)
        try:
            self._write_narrowing(key, raw, narrowing, pairs, denies)
        except BackendError as exc:
            raise type(exc)(
                exc.backend, f"{why}; its narrowing could not be written beside it either: {_said(exc)}"
            ) from exc
        if short:
            raise PermanentBackendError(
                refused.backend,
                f"{why}; its narrowing is written in a narrowing policy beside it, but {'; '.join(short)}",
            )

    def _narrowing(self, key: tuple[str, Any]) -> Json | None:
        if key in self.written.narrowings:
            return self.written.narrowings[key]
        return self.narrowings.get(key)

    def _write_narrowing(
        self,
        key: tuple[str, Any],
        raw: Json | None,
        narrowing: Json | None,
        pairs: frozenset[Pair],
        denies: frozenset[Pair] = frozenset(),
    ) -> None:
        """The narrowing policy at ``key`` made to deny ``pairs``, ``denies`` of them for the
        model's deny items (removed when they are none and nothing else is left in it); items
        somebody else put in it are kept."""
        ours = self.naming.ours
        if narrowing is not None and denied(narrowing, ours) == pairs and model_denies(narrowing) == denies:
            return
        self.written.whole = True
        if narrowing is None:
            assert raw is not None
            if pairs:
                self.written.narrowing(key, self._create_narrowing(raw, pairs, denies))
            return
        fact = PolicyFact(key[0], resource_key(narrowing), frozenset(), pairs) if pairs else None
        rest = with_denies(merged(narrowing, fact, ours), denies)
        if raw is not None:
            rest = with_narrows(rest, raw)  # an older one, or one edited by hand: named again
        if not pairs and self.label in (narrowing.get("policyLabels") or ()) and not foreign_items(rest):
            self.api.delete_policy(int(narrowing["id"]), str(narrowing.get("name")))
            self.written.narrowing(key, None)
            return
        if pairs:
            # disabled, or given a normal priority, conditions or a schedule by hand: made to
            # deny always again, unless that would put items somebody added to it in force
            fixed = restored(rest)
            if fixed is None:
                raise PermanentBackendError(
                    self.api.backend,
                    f"the narrowing policy {narrowing.get('name')!r} was edited by hand (it is not in "
                    "force and holds allow items somebody added): not written",
                )
            rest = fixed
        try:
            answer = self.api.update_policy(int(narrowing["id"]), rest)
        except PermanentBackendError as exc:
            if not pairs or raw is None or not signature_taken(str(exc)):
                raise
            answer = self._update_on_spare(raw, narrowing, rest, exc)
        self.written.narrowing(key, answer)

    def _update_on_spare(
        self, raw: Json, narrowing: Json, rest: Json, refused: PermanentBackendError
    ) -> Json:
        """Ranger refused the update of ``narrowing`` to ``rest`` for its resource signature
        (3010: another policy holds it at override priority, one made since, say): the same
        update with the resources on the next spare form of ``raw``'s (another signature), up
        to :data:`~pushdown_ranger.companion.MOST_SPARES`. One update of the same policy: it
        denies as before until Ranger takes the new form, so there is no moment where no
        narrowing denies; a clash of signatures never holds back the narrowing."""
        first = 1 if int(raw.get("policyPriority") or 0) == OVERRIDE else 0
        service = str(raw.get("service"))
        tried = {resource_key(narrowing)}
        held = self._held_signatures()
        for spare in range(first, MOST_SPARES + 1):
            resources = spare_forms(raw.get("resources") or {}, spare)[0]
            form = {**rest, "resources": resources}
            if resource_key(form) in tried:
                continue  # the form Ranger just refused
            tried.add(resource_key(form))
            if spare < MOST_SPARES and (service, resource_key(form)) in held:
                continue  # read at that signature: Ranger would refuse it (3010)
            try:
                return self.api.update_policy(int(narrowing["id"]), form)
            except PermanentBackendError as exc:
                if not signature_taken(str(exc)):
                    raise
                refused = exc
        raise refused

    def _create_narrowing(self, raw: Json, pairs: frozenset[Pair], denies: frozenset[Pair]) -> Json:
        """The narrowing policy beside ``raw``, on its resources; on their spare form
        (:func:`~pushdown_ranger.companion.spare_form`: exactly the same resources, another
        signature) when ``raw`` has override priority itself (the same resources at the same
        priority are the same signature: Ranger would refuse it, error 3010). Where another
        policy holds that signature (read so, or Ranger refuses the create for it: 3010), on the
        next spare form, up to :data:`~pushdown_ranger.companion.MOST_SPARES`: a clash of
        signatures never holds back the narrowing."""
        first = 1 if int(raw.get("policyPriority") or 0) == OVERRIDE else 0
        last = max(first, MOST_SPARES)
        service = str(raw.get("service"))
        for spare in range(first, last + 1):
            form = narrowing_policy(raw, pairs, self.label, "", spare, denies)
            if spare < last and (service, resource_key(form)) in self._held_signatures():
                continue  # read at that signature: Ranger would refuse it (3010)
            try:
                return self._create_named(raw, pairs, denies, spare)
            except PermanentBackendError as exc:
                if spare == last or not signature_taken(str(exc)):
                    raise
        raise AssertionError("unreachable")

    def _create_named(self, raw: Json, pairs: frozenset[Pair], denies: frozenset[Pair], spare: int) -> Json:
        """The narrowing policy on ``spare`` spare forms; under another name when its own is
        taken (error 3006)."""
        for attempt in range(NAME_ATTEMPTS):
            salt = "" if attempt == 0 else secrets.token_hex(8)
            try:
                return self.api.create_policy(narrowing_policy(raw, pairs, self.label, salt, spare, denies))
            except PermanentBackendError as exc:
                if attempt == NAME_ATTEMPTS - 1 or not name_taken(str(exc)):
                    raise
        raise AssertionError("unreachable")

    def _held_signatures(self) -> set[tuple[str, Any]]:
        """The (service, resource key) of every policy read or written at override priority:
        a narrowing policy there would have its resource signature (Ranger refuses it: 3010)."""
        policies = [*self.policies.values(), *self.shadowed, *self.narrowings.values()]
        policies += [p for p in self.written.policies.values() if p is not None]
        policies += [p for p in self.written.narrowings.values() if p is not None]
        return {
            (str(p.get("service")), resource_key(p))
            for p in policies
            if int(p.get("policyPriority") or 0) == OVERRIDE
        }

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


def signature_taken(message: str) -> bool:
    """Whether Ranger refused a policy because another one holds its resource signature
    (error 3010)."""
    return "3010" in message or "already exists for matching resource" in message


def _said(exc: BackendError) -> str:
    """What ``exc`` says, without the backend's name it starts with."""
    return str(exc).removeprefix(f"{exc.backend}: ")
