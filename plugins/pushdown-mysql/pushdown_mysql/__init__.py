"""MySQL/MariaDB backend for pushdown: compile the model to exact GRANTs, read them back."""

from __future__ import annotations

from pushdown_mysql.backend import MySQLBackend

__all__ = ["MySQLBackend"]
