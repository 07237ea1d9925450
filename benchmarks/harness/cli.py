"""The arguments every benchmark accepts: ``--scale``, ``--seed``, ``--json``."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_SEED = 20240601


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def common(default_scale: float = 1.0) -> argparse.ArgumentParser:
    """A parent parser (``parents=[common()]``) holding the three shared options."""
    parser = argparse.ArgumentParser(add_help=False)
    group = parser.add_argument_group("common benchmark options")
    group.add_argument(
        "--scale",
        type=positive_float,
        default=default_scale,
        help=f"size of the run relative to the full one (default {default_scale:g}); 0.001 runs in seconds",
    )
    group.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of every random choice")
    group.add_argument("--json", type=Path, metavar="PATH", help="also write every number to PATH as JSON")
    return parser


def parser(doc: str | None, default_scale: float = 1.0) -> argparse.ArgumentParser:
    """A benchmark's parser: its docstring's first paragraph as description, the common options."""
    return argparse.ArgumentParser(
        description=(doc or "").split("\n\n")[0],
        epilog="\n\n".join((doc or "").split("\n\n")[1:]) or None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common(default_scale)],
    )
