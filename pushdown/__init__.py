"""pushdown: one privilege model with Gravitino's semantics, pushed down to every backend.

The library API is :class:`pushdown.app.service.AccessControl`; decisions come from
:class:`pushdown.decide.evaluator.Evaluator`. See the README for the tour.
"""

from __future__ import annotations

__version__ = "0.1.0"
