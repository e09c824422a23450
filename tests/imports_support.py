"""Reading a module's imports from its syntax tree, for the tests that check who imports what.

from imports_support import imported_modules
"""

from __future__ import annotations

import ast


def imported_modules(node: ast.AST) -> list[str]:
    """The modules an ``import`` or ``from … import`` statement names (``from . import x``: "");
    an empty list for any other node."""
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return []
