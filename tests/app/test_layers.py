"""The app wing in layers keeps its promises: every public name the docs and
``pushdown/__init__.py`` promise still imports from where they say, ``AccessControl``
offers every method it offered as one class, the entry point is where the packaging says,
every part of the wing sits in a layer of the import contract, and no module of the wing
is longer than ~250 lines without a reason in its docstring."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "pushdown" / "app"

#: (module, name) the README, the docs, the examples and pushdown/__init__.py name
PROMISED = [
    ("pushdown.app.service", "AccessControl"),
    ("pushdown.app.service", "ChangeResult"),
    ("pushdown.app.service", "MetalakeInfo"),
    ("pushdown.decide.evaluator", "Evaluator"),
    ("pushdown.app.cli", "main"),
    ("pushdown.app.settings", "load_config"),
    ("pushdown.app.settings", "from_mapping"),
    ("pushdown.app.settings", "Config"),
    ("pushdown.app.service.spec", "load_spec"),
    ("pushdown.app.service.spec", "load_spec_text"),
    ("pushdown.app.source.surface", "SURFACE"),
    ("pushdown.app.rest.routes", "ROUTES"),
    ("pushdown.host.hookspecs", "hookimpl"),
]

#: every public method of AccessControl when it was one class
METHODS = (
    "acting as_admin as_source open close model change add_user remove_user add_group remove_group "
    "add_member remove_member create_role delete_role grant_privileges revoke_privileges grant_role "
    "revoke_role set_owner create_object drop_object rename_object set_service_admins load_model "
    "metalake create_metalake alter_metalake drop_metalake audit audits decision_model authorize "
    "effective_privileges outside_members record_external_members sync_model preview sync"
).split()


@pytest.mark.parametrize(("module", "name"), PROMISED, ids=[f"{m}.{n}" for m, n in PROMISED])
def test_every_promised_name_imports(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name), f"{module} has no {name}"


def test_the_package_docstring_names_what_exists() -> None:
    import pushdown

    named = set(re.findall(r"`(pushdown\.[\w.]+)`", pushdown.__doc__ or ""))
    assert named, "the package docstring names the library API"
    for dotted in named:
        module, _, attr = dotted.rpartition(".")
        assert hasattr(importlib.import_module(module), attr), dotted


def test_access_control_offers_every_method_it_did() -> None:
    from pushdown.app.service import AccessControl

    missing = [m for m in METHODS if not hasattr(AccessControl, m)]
    assert not missing, missing
    assert inspect.signature(AccessControl.grant_privileges).parameters.keys() == {
        "self",
        "role",
        "obj",
        "privileges",
        "condition",
    }


def test_the_entry_point_is_the_wired_command_group() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attr = scripts["pushdown"].partition(":")
    group = getattr(importlib.import_module(module), attr)
    assert isinstance(group, click.Group)
    # the commands that start another front-end are there, and the launchers registered
    assert {"daemon", "serve", "pull", "status", "import", "export"} <= set(group.commands)
    from pushdown.app.service.frontends import LAUNCHERS

    assert None not in (LAUNCHERS.daemon, LAUNCHERS.serve, LAUNCHERS.source, LAUNCHERS.workers)


def test_python_dash_m_runs_the_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pushdown.app.cli", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "serve" in done.stdout and "daemon" in done.stdout


def test_a_launcher_not_registered_is_one_line_error() -> None:
    from pushdown.app.service import frontends
    from pushdown.app.settings import Config
    from pushdown.errors import ConfigError

    empty = frontends.Launchers()
    saved, frontends.LAUNCHERS = frontends.LAUNCHERS, empty
    try:
        with pytest.raises(ConfigError, match="the model source is not available in this process"):
            frontends.model_source(Config())
    finally:
        frontends.LAUNCHERS = saved


def _contract_layers() -> list[str]:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (wing,) = [c for c in contracts if c["type"] == "layers" and "pushdown.app.service" in str(c["layers"])]
    return [m.strip() for layer in wing["layers"] for m in layer.split("|")]


def test_every_part_of_the_wing_is_in_a_layer() -> None:
    layered = set(_contract_layers())
    parts = {
        f"pushdown.app.{p.stem if p.is_file() else p.name}"
        for p in APP.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert parts - layered == set(), "add each new part of pushdown/app to a layer in pyproject.toml"
    assert layered <= parts


def test_no_long_module_without_a_reason() -> None:
    long = []
    for path in sorted(APP.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if lines > 250 and "Longer than" not in doc:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, long
