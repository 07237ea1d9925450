"""The exceptions pushdown raises; each message names the offending input and what to do."""

from __future__ import annotations


class PushdownError(Exception):
    """Base class of every error pushdown raises on purpose.

    ``delay``: seconds after which the same work is worth trying again (a temporary
    error), or ``None`` when waiting will not help (a person must act). It travels with
    the error to the sync's result and the daemon's back-off."""

    delay: float | None = None


class ModelError(PushdownError, ValueError):
    """A change to the privilege model that the model rejects; nothing was written."""


class BindingRefused(ModelError):
    """A change that would bind a model object to enforcement (which catalog a backend
    enforces, a fileset's location, a topic): administration, set by configuration."""


class UnknownPrincipal(ModelError):
    """A user, group or role that the model does not hold."""


class AlreadyExists(ModelError):
    """A user, group, role, object or metalake that exists already."""


class ExistsOnServer(AlreadyExists):
    """A caller's registration of an object that a backend's server holds already (a
    database or table nobody registered): its creator would become the owner of data that
    existed before. Only an administrator's entry point (a spec, the CLI) declares such an
    object and its owner."""


class UnknownObject(ModelError):
    """An object (or the metalake) that the model does not hold."""


class NotEmpty(ModelError):
    """A drop that would take more with it than asked (the metalake still holds things)."""


class Forbidden(PushdownError):
    """The acting user may not make this change; nothing was written.

    ``decision`` is the evaluator's: its trace says which checks failed."""

    def __init__(self, user: str, operation: str, target: str, why: str, decision: object = None) -> None:
        self.user, self.operation, self.target, self.decision = user, operation, target, decision
        #: the reason when it is a fixed rule (no decision: no owner, holder or grant in it)
        self.rule = why if decision is None else None
        super().__init__(f"{user} may not {operation.replace('_', ' ')} (on {target}): {why}")


class Followed(PushdownError):
    """The model follows a source (``[source]`` in the config): every change is made there,
    and pushdown refuses its own; nothing was written. ``source`` names it."""

    def __init__(self, source: str) -> None:
        self.source = source
        super().__init__(
            f"the model follows {source}: make this change there (pushdown's own changes are refused "
            "while [source] is configured)"
        )


class SpecError(PushdownError):
    """A spec file with problems; ``problems`` holds one message per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


class ConfigError(PushdownError):
    """A configuration file or setting that cannot be used."""


class BackendError(PushdownError):
    """A backend failed; ``backend`` names it. Subclasses say whether to retry."""

    def __init__(self, backend: str, message: str) -> None:
        self.backend = backend
        super().__init__(f"{backend}: {message}")


class TemporaryBackendError(BackendError):
    """The backend is unreachable or busy: the same work may succeed later, after
    ``delay`` seconds (5 unless the backend knows better, e.g. from a Retry-After)."""

    delay: float | None = 5.0

    def __init__(self, backend: str, message: str, *, delay: float | None = None) -> None:
        super().__init__(backend, message)
        if delay is not None:
            self.delay = delay


class PermanentBackendError(BackendError):
    """The backend refused the work (permissions, bad object): retrying will not help."""


class NotConverged(BackendError):
    """After apply, reading the backend back still shows differences."""


class Guarded(PushdownError):
    """A plan that needs an explicit go-ahead (it removes most of what a backend holds,
    or it was saved and the model or the server moved since); nothing was applied."""


class StoreError(PushdownError):
    """The store cannot be opened or used: a missing file, not an SQLite database, no access."""


class Busy(PushdownError):
    """Someone else holds what this call needs (the store's write lock, a backend's writer
    lease) for longer than the call may wait; nothing was written. Try again later: the
    holder finishes, so a second is enough."""

    delay: float | None = 1.0
