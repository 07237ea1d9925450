"""The backend's apply (the writes of :func:`~pushdown_ranger.ordering.schedule`, narrow-first,
never wider after a refusal), the allow items withdrawn behind a refused deny, and the
read-back of the touched keys."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pushdown.errors import BackendError, TemporaryBackendError
from pushdown.model.state import Model
from pushdown.reconcile.backend import (
    Applied,
    Failure,
    Progress,
    Snapshot,
)
from pushdown.reconcile.holdback import HoldBack
from pushdown.reconcile.plan import Op, Plan
from pushdown.reconcile.scope import Resolved
from pushdown_ranger.companion import denying_roles
from pushdown_ranger.facts import PolicyFact, RoleFact
from pushdown_ranger.ordering import (
    BOTH,
    CREATE_ROLES,
    Write,
    schedule,
    stage_of,
)
from pushdown_ranger.reading import Reading
from pushdown_ranger.snapshot import (
    RangerApplied,
    RangerSnapshot,
    complete,
)
from pushdown_ranger.withdraw import relying, standing, withdraw
from pushdown_ranger.writer import Writer


class Applying(Reading):
    def order(self, op: Op) -> tuple[object, ...]:
        """The plan's order: each operation where its first write goes (:func:`schedule`)."""
        return (stage_of(op, split=True)[0], str(op.fact))

    def writes(self, plan: Plan, snapshot: Snapshot) -> list[Write]:
        """The writes :meth:`apply` makes for ``plan`` against ``snapshot``, in order."""
        assert isinstance(snapshot, RangerSnapshot)
        index = self._read_index(snapshot)  # the roles the policies name, kept per read
        named = (index.allowing_roles, index.denying_roles)
        if snapshot.narrowings:  # the roles narrowing policies deny (not among the facts' deny pairs)
            more = denying_roles(snapshot.narrowings, self.naming.ours)
            named = (index.allowing_roles, {**index.denying_roles, **dict.fromkeys(more, 1)})
        prefix = self.naming.user_role_prefix

        # names a role made for a join cycle's user never takes: the hand-made roles', and
        # the per-user role name of every user the model or Ranger knows (looked at only
        # when such a role is made)
        def reserved() -> Iterator[str]:
            yield from (str(role.get("name")) for role in snapshot.others)
            yield from (prefix + user for user in self.seen_users)

        return schedule(
            plan.ops,
            snapshot.facts,
            named,
            snapshot.implied,
            prefix,
            self._nested_elsewhere(snapshot),
            nested=index.member_roles,
            reserved=reserved(),
        )

    def _nested_elsewhere(self, snapshot: RangerSnapshot) -> frozenset[str]:
        """The roles a hand-made role holds as members (their members get its access):
        worked out once per read."""
        kept = self._others_nested
        if kept is not None and kept[0] is snapshot.others:
            return kept[1]
        found = frozenset(
            str(m.get("name"))
            for role in snapshot.others
            for m in role.get("roles") or ()
            if isinstance(m, dict)
        )
        self._others_nested = (snapshot.others, found)
        return found

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        """The writes of :func:`schedule`, in order. Once a write is refused (or unanswered),
        no write that widens follows (it could widen past a narrowing that did not happen);
        every write that narrows still is: an error never holds back a narrowing. The
        operations left are reported as failures; an unanswered write fails the apply as
        temporary once the narrowing writes have all been tried."""
        assert isinstance(snapshot, RangerSnapshot)
        self.last = None  # whatever happens, the next read reads
        writer = Writer(
            self.api,
            self.naming,
            self.label,
            self.role_service,
            snapshot.policies,
            snapshot.roles,
            snapshot.implied,
            narrowings=snapshot.narrowings,
            deny=snapshot.deny,
            shadowed=snapshot.shadowed,
        )
        failures: list[Failure] = []
        done = 0
        refused: set[Op] = set()
        extra: set[Op] = set()  # the operations made for writes the plan has none for
        hold = HoldBack()  # every widening write waits once any write is refused
        unanswered: str | None = None
        unmade: set[str] = set()  # roles made for a join cycle whose create was refused
        for write in self.writes(plan, snapshot):
            op = write.op
            if write.extra:
                extra.add(op)
            if op in refused:
                continue
            step = write.step
            if unmade and write.transient:
                # a policy write naming a role Ranger refused to create is refused too: it
                # goes without that role's items, so its narrowing is never held back
                kept = _without(write.step, unmade)
                if kept is None:
                    continue
                step = kept
            if write.widens and hold.blocker(op) is not None:
                refused.add(op)
                failures.append(
                    Failure((op,), f"{self.name}: {op.fact}: not written: an earlier write was refused")
                )
                # a policy change written whole (narrows and widens) still narrows: its
                # narrowing half (the allow items it keeps, the deny items of both)
                half = stage_of(op, split=True)[1] if write.step is op and write.stage == BOTH else None
                if half is not None:
                    try:
                        writer.write(half)
                    except TemporaryBackendError as exc:
                        unanswered = unanswered or str(exc.args[-1] if exc.args else exc)
                    except BackendError as exc:
                        failures.append(Failure((op,), str(exc)))
                continue
            made = write.extra and write.stage == CREATE_ROLES and isinstance(step.after, RoleFact)
            try:
                writer.write(step)
            except TemporaryBackendError as exc:
                # every narrowing write left is still tried; the sync fails as temporary after them
                unanswered = unanswered or str(exc.args[-1] if exc.args else exc)
                refused.add(op)
                hold.refused(op)
                if made and isinstance(step.after, RoleFact):
                    unmade.add(step.after.name)
                continue
            except BackendError as exc:
                refused.add(op)
                hold.refused(op)
                failures.append(Failure((op,), str(exc)))
                if made and isinstance(step.after, RoleFact):
                    unmade.add(step.after.name)
                continue
            if write.last:
                done += 1
                progress(1)
        # a write made for a join cycle's transient deny items (no operation of the plan's)
        # withdraws nothing when refused: the joins it was for wait, as every widening write
        failures += self._withdraw(writer, plan, refused - extra, snapshot)
        if unanswered is not None:
            raise TemporaryBackendError(
                self.name,
                f"{unanswered}; {done} of {len(plan.ops)} operation(s) done (every narrowing tried)",
            )
        return RangerApplied(done, tuple(failures), written=writer.written)

    def _withdraw(
        self, writer: Writer, plan: Plan, refused: set[Op], snapshot: RangerSnapshot
    ) -> list[Failure]:
        """Refused writes that add deny items, or members to a role deny items name: withdraw
        the allow items those deny items protect against, on their own resource set too
        (:mod:`pushdown_ranger.withdraw`); a failure naming each (the sync is not clean)."""
        if not refused:  # nothing refused: no copy of every policy read (one per sync, before)
            return []
        policies = {
            **snapshot.policies,
            **{k: v for k, v in writer.written.policies.items() if v is not None},
        }
        ours = self.naming.ours
        denied: dict[PolicyFact, list[Op]] = {}
        for op in refused:
            fact = op.fact
            if isinstance(fact, PolicyFact) and op.action != "remove" and fact.deny:
                if not standing(fact, policies, ours):
                    denied.setdefault(fact, []).append(op)
            elif isinstance(fact, RoleFact) and _joins(op):
                for relied in relying([fact.name], policies, ours):
                    denied.setdefault(relied, []).append(op)
        if not denied:
            return []

        def write(key: tuple[str, Any], fact: PolicyFact) -> None:
            writer.write(Op("change", after=fact, before=fact))

        out: list[Failure] = []
        ops = tuple(sorted({op for found in denied.values() for op in found}, key=str))
        try:
            said = withdraw(sorted(denied, key=str), policies, ours, write)
        except BackendError as exc:
            said = [f"withdrawing the allow items a refused deny protects failed too: {exc}"]
        for text in said:
            out.append(Failure(ops, f"{self.name}: {text}"))
        return out

    def reread(
        self, model: Model, scope: Resolved, plan: Plan, snapshot: Snapshot, applied: Applied | None = None
    ) -> Snapshot:
        """The touched keys as Ranger answered the writes, when the versions show no other
        writer (two cheap calls); otherwise everything, read again."""
        assert isinstance(snapshot, RangerSnapshot)
        # what the writes answered; without it (no apply of this backend's) read everything
        written = applied.written if isinstance(applied, RangerApplied) else None
        expected = written.expected(snapshot.versions) if written is not None else ()
        roles_expected = next((v[2] for v in expected if v[0] == ""), None)
        fresh = self.versions(roles_expected if isinstance(roles_expected, int) else None)
        if written is not None and fresh == expected and complete(fresh) and not self._ids_moved:
            self.defs_moved(snapshot.versions, fresh)  # no definition updated meanwhile
            policies = written.patched_policies(snapshot.policies)
            roles = written.patched_roles(snapshot.roles)
            self._see_answered(snapshot.roles, roles, written.roles)
            # the findings look again at the keys written only (Reporting._each)
            self._patch = (
                snapshot.policies,
                policies,
                tuple(written.policies),
                snapshot.roles,
                roles,
                tuple(written.roles),
            )
            since = (snapshot, written.policies, written.roles)
            patched = replace(
                self._snapshot(fresh, policies, roles, snapshot.deny, since), implied=snapshot.implied
            )
            self.last = replace(
                patched,
                zones=snapshot.zones,
                zoned=snapshot.zoned,
                others=snapshot.others,
                shadowed=snapshot.shadowed,
                voided={**snapshot.voided, **patched.voided},
                voiding=snapshot.voiding | patched.voiding,
                overriding=snapshot.overriding | patched.overriding,
            )
        else:
            self.last = replace(self._read(fresh, snapshot.deny), implied=snapshot.implied)
        try:
            found = self.with_findings(self.last, model)
        finally:
            self._patch = None
        return replace(found, within=self.within(model, scope, self.last))


def _joins(op: Op) -> bool:
    """Whether ``op`` gives a role that exists members it did not have."""
    before, after = op.before, op.after
    if op.action == "remove" or not isinstance(after, RoleFact):
        return False
    if not isinstance(before, RoleFact):
        return bool(after.users or after.groups or after.roles)
    return bool(after.users - before.users or after.groups - before.groups or after.roles - before.roles)


def _without(step: Op, unmade: set[str]) -> Op | None:
    """A join cycle's policy write ``step`` without the deny items naming the roles of
    ``unmade`` (made for it, their create refused: Ranger refuses a policy naming a role it
    does not hold); ``None`` when nothing is then left to write. Dropping them is safe: a
    refused write holds back every widening write after it, the joins they were for too."""
    before, after = step.before, step.after
    if not isinstance(after, PolicyFact) or not any(r in unmade for r, _ in after.deny):
        return step
    kept = replace(after, deny=frozenset(p for p in after.deny if p[0] not in unmade))
    if kept == before:
        return None
    return Op(step.action, before, kept, step.phase)
