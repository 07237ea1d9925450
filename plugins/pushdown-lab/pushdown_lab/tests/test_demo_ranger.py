"""``pushdown demo-ranger``: the example's roles and policies, and clear errors on a bad spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pushdown.app.cli import main

pytestmark = pytest.mark.ranger
EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "demo.yaml"


def test_the_demo_applies_the_example_and_the_second_plan_is_empty() -> None:
    out = CliRunner().invoke(main, ["demo-ranger", str(EXAMPLE)])
    assert out.exit_code == 0, out.output
    assert "policies, as the stand-in holds them:" in out.stdout
    assert "second plan: " in out.stdout and "policy " in out.stdout


@pytest.mark.parametrize(
    ("text", "words"), [("nonsense: [\n", "not valid YAML"), ("users: 5\n", "users must be")]
)
def test_a_bad_spec_is_a_clear_error_not_a_traceback(tmp_path: Path, text: str, words: str) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(text)
    out = CliRunner().invoke(main, ["demo-ranger", str(spec)])
    assert out.exit_code == 1 and words in out.stderr and "problem(s) in the spec" in out.stderr
    assert out.exception is None or isinstance(out.exception, SystemExit)
    assert "Traceback" not in out.output
