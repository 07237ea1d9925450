"""What each view of the page shows, computed from the service and the core (no HTML here):
one module per view, gathered here (:mod:`.reader` says what a caller may see)."""

from pushdown.app.page.checks import Matrix, Node, backends_view, explain, matrix, tree
from pushdown.app.page.objects import ObjectView, Reason, enforcement, object_view
from pushdown.app.page.principals import PrincipalView, audit, principal_view
from pushdown.app.page.reader import MAX_CELLS, OPS_BY_TYPE, PAGE, PAGE_OPS, Hidden, Reader

__all__ = [
    "MAX_CELLS",
    "OPS_BY_TYPE",
    "PAGE",
    "PAGE_OPS",
    "Hidden",
    "Matrix",
    "Node",
    "ObjectView",
    "PrincipalView",
    "Reader",
    "Reason",
    "audit",
    "backends_view",
    "enforcement",
    "explain",
    "matrix",
    "object_view",
    "principal_view",
    "tree",
]
