"""The plugin host: every hook documented and tested, entry points, typed call sites."""

from __future__ import annotations

import inspect
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pushdown.app.service import AccessControl
from pushdown.errors import ConfigError
from pushdown.host import hookspecs
from pushdown.host.hookspecs import hookimpl
from pushdown.host.plugins import Hooks
from pushdown.host.recording import Permit, RecordingBackend
from pushdown.journal.store import Store
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.registry import BackendRegistry

ROOT = Path(__file__).resolve().parents[2]
HOOKS = [
    name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("pushdown_")
]


def test_there_are_hooks() -> None:
    assert set(HOOKS) >= {
        "pushdown_register_backends",
        "pushdown_map_principal",
        "pushdown_resolve_group_members",
        "pushdown_event_committed",
    }


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_typed_and_tested(hook: str) -> None:
    fn = getattr(hookspecs, hook)
    assert fn.__doc__ and "Fires" in fn.__doc__, "say when the hook fires"
    assert "return" in fn.__annotations__
    assert f"## {hook}(" in (ROOT / "docs" / "plugins.md").read_text()
    found = [*(ROOT / "tests").rglob("test_*.py"), *(ROOT / "plugins").rglob("tests/test_*.py")]
    tests = [p for p in found if p.name != "test_plugins.py"]
    tests.append(Path(__file__))
    uses = sum(p.read_text().count(f"def {hook}(") for p in tests)
    assert uses >= 1, f"no test implements {hook}"


def test_builtin_backend_is_registered_through_its_entry_point() -> None:
    hooks = Hooks.load()
    assert "recording" in hooks.backends.kinds()
    names = [name for name, _ in hooks.plugins()]
    assert "recording" in names  # the entry point's name, as a third party's would be


class Directory:
    """A third-party plugin: names users in lower case, knows an outside group member."""

    @hookimpl
    def pushdown_map_principal(self, backend: str, principal: Principal) -> str | None:
        return principal.name.upper() if backend == "shouting" else None

    @hookimpl
    def pushdown_resolve_group_members(self, group: str) -> list[str] | None:
        return ["zed"] if group == "analysts" else None


class Audit:
    def __init__(self) -> None:
        self.seen: list[tuple[int, str]] = []

    @hookimpl
    def pushdown_event_committed(self, event: Event, seq: int) -> None:
        self.seen.append((seq, event.name))


class BrokenAudit:
    @hookimpl
    def pushdown_event_committed(self, event: Event, seq: int) -> None:
        raise RuntimeError("audit sink is down")


class ExtraCommand:
    @hookimpl
    def pushdown_register_commands(self, cli: click.Group) -> None:
        @cli.command(name="hello")
        def hello() -> None:
            click.echo("hello from a plugin")


def test_plugins_add_commands_to_the_cli() -> None:
    group = click.Group()
    Hooks.load(extra=[ExtraCommand()]).register_commands(group)
    assert "hello" in group.commands
    assert CliRunner().invoke(group, ["hello"]).output == "hello from a plugin\n"


class Twice:
    @hookimpl
    def pushdown_register_backends(self, registry: BackendRegistry) -> None:
        registry.add("recording", RecordingBackend)


def test_map_principal_first_answer_wins_and_none_falls_through() -> None:
    hooks = Hooks.load(extra=[Directory()])
    assert hooks.map_principal("shouting", Principal.user("alice")) == "ALICE"
    assert hooks.map_principal("quiet", Principal.user("alice")) == "alice"


def _ac(hooks: Hooks) -> AccessControl:
    backend = RecordingBackend(BackendContext(name="main", settings={}))
    ac = AccessControl(Store(), {"main": backend}, hooks)
    ac.add_user("alice")
    ac.add_group("analysts", ["alice"])
    ac.create_object("catalog c", None, {"backend": "main"})
    ac.create_object("schema c.s")
    ac.create_object("table c.s.t")
    ac.create_role("r")
    ac.grant_privileges("r", "catalog c", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
    return ac


def test_group_members_from_a_directory_are_granted_for_the_sync_only() -> None:
    ac = _ac(Hooks.load(extra=[Directory()]))
    ac.grant_role("r", "group analysts")
    held = ac.backends["main"].held  # type: ignore[attr-defined]
    table = ObjectRef.parse("table c.s.t")
    assert Permit("zed", "load_table", table) in held
    assert Permit("alice", "load_table", table) in held
    assert "zed" not in ac.model.users  # the stored model is unchanged


def test_event_observers_see_every_committed_event_and_cannot_break_a_change() -> None:
    audit = Audit()
    ac = _ac(Hooks.load(extra=[audit, BrokenAudit()]))
    result = ac.grant_role("r", "user alice")
    assert result.events[0].name == "role_granted"
    assert audit.seen[-1] == (result.seqs[0], "role_granted")
    assert [seq for seq, _ in audit.seen] == sorted(seq for seq, _ in audit.seen)


def test_a_kind_registered_twice_names_both_origins() -> None:
    hooks = Hooks.load(extra=[Twice()])
    with pytest.raises(ConfigError, match="registered twice"):
        _ = hooks.backends


class ChangingDirectory:
    """An outside directory whose answer changes between syncs."""

    def __init__(self) -> None:
        self.members = {"analysts": ["zed"]}

    @hookimpl
    def pushdown_resolve_group_members(self, group: str) -> list[str] | None:
        return self.members.get(group)


def test_a_member_who_leaves_the_directory_loses_access_at_the_next_scoped_sync() -> None:
    directory = ChangingDirectory()
    ac = _ac(Hooks.load(extra=[directory]))
    ac.grant_role("r", "group analysts")
    held = ac.backends["main"].held  # type: ignore[attr-defined]
    table = ObjectRef.parse("table c.s.t")
    assert Permit("zed", "load_table", table) in held
    directory.members = {"analysts": []}
    before = ac.store.last_seq()
    ac.sync(dry_run=True)  # a dry run asks the directory but records nothing
    assert ac.store.last_seq() == before
    [synced] = ac.sync()  # scoped by the journal, not a full sync
    assert synced.plan is not None and not synced.plan.scope.full
    assert [str(op) for op in synced.plan.ops if "zed" in str(op)] != []
    assert not any(p.user == "zed" for p in held)
    assert Permit("alice", "load_table", table) in held
    [event] = [e for _, e in ac.store.events_since(before)]
    assert event.name == "external_members_changed"
