"""``pushdown demo-ranger SPEC``: apply a spec to a Ranger Admin stand-in and show its
roles and policies as the stand-in holds them afterwards.

The command starts the stand-in (127.0.0.1, a free port) with the services ``hive``,
``hdfs`` and ``kafka``, syncs every catalog of the spec through the ``ranger`` backend
(plan, apply, read back), prints the plan, then the roles and the policies read back
from the stand-in, and a second plan (empty). The stand-in is gone when the command ends.
"""

from __future__ import annotations

from typing import Any

import click
from pushdown_ranger.backend import RangerBackend

from pushdown.app.commands.output import escaped_lines
from pushdown.app.service.spec import load_spec
from pushdown.errors import PushdownError, SpecError
from pushdown.model.securables import METALAKE, SecurableType
from pushdown.reconcile import planner
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_lab.ranger_standin import Standin


def render_role(role: dict[str, Any]) -> str:
    members = [f"user {m['name']}" for m in role.get("users") or ()]
    members += [f"group {m['name']}" for m in role.get("groups") or ()]
    return f"role {role['name']}: {', '.join(members) or '(no members)'}"


def render_policy(policy: dict[str, Any]) -> list[str]:
    res = ", ".join(
        f"{k}={','.join(v['values'])}{' (recursive)' if v.get('isRecursive') else ''}"
        for k, v in sorted(policy["resources"].items())
    )
    lines = [f"policy {policy['service']} [{res}] labels={policy.get('policyLabels') or []}"]
    for field, word in (("policyItems", "allow"), ("denyPolicyItems", "deny ")):
        for item in policy.get(field) or ():
            accesses = ",".join(a["type"] for a in item["accesses"])
            who = ", ".join([*item.get("roles", ()), *item.get("users", ()), *item.get("groups", ())])
            lines.append(f"    {word} {accesses:28} to {who}")
    return lines


@click.command("demo-ranger")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
def demo_ranger(spec: str) -> None:
    """Apply SPEC to a Ranger Admin stand-in and show its roles and policies, read back."""
    try:
        _demo(spec)
    except SpecError as exc:  # a clear error, never a traceback
        lines = [escaped_lines(p) for p in exc.problems]
        raise click.ClickException("\n".join([*lines, f"{len(lines)} problem(s) in the spec"])) from None
    except PushdownError as exc:
        raise click.ClickException(escaped_lines(str(exc))) from None


def _demo(spec: str) -> None:
    model = load_spec(spec)
    catalogs = frozenset(o.names[0] for o in model.children(METALAKE) if o.type is SecurableType.CATALOG)
    if not catalogs:
        raise click.ClickException(f"{spec}: no catalog; nothing to demonstrate")
    with Standin() as ranger:
        for service in ("hive", "hdfs", "kafka"):
            ranger.create_service(service, service)
        user, password = ranger.auth
        settings = {"url": ranger.url, "user": user}
        context = BackendContext("ranger", settings, secret=lambda k: password if k == "password" else None)
        context.catalogs = catalogs
        backend = RangerBackend(context)
        click.echo(
            f"backend ranger: Ranger Admin stand-in on {ranger.url} "
            f"for catalog(s) {', '.join(sorted(catalogs))}"
        )
        plan, _ = reconcile(backend, model, Scope.everything())
        click.echo(plan.render())
        click.echo("applied; read back: in sync\n")
        click.echo("roles, as the stand-in holds them:")
        for role in ranger.store.list_roles({}):
            click.echo("  " + render_role(role))
        click.echo("policies, as the stand-in holds them:")
        for policy in ranger.store.list_policies({}):
            for line in render_policy(policy):
                click.echo("  " + line)
        again = planner.plan(backend, model, Scope.everything())
        click.echo(f"\nsecond plan: {again.render()}")
