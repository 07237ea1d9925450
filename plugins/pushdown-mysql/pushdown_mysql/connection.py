"""The one connection the backend talks through: counts queries, translates errors.

Lost or refused connections become :class:`TemporaryBackendError` (the next attempt
reconnects); refusals become :class:`PermanentBackendError` carrying the server's own
words, and access-denied refusals also name the privilege pushdown's account lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pymysql
from pymysql.constants import CLIENT

from pushdown.errors import PermanentBackendError, TemporaryBackendError

#: Client-side codes for a connection that is gone or never came (CR_*).
LOST = frozenset({2002, 2003, 2006, 2013, 2014, 2055})
#: Server codes for "you may not" (ER_DBACCESS_DENIED, ER_ACCESS_DENIED, ER_TABLEACCESS_DENIED…).
DENIED = frozenset({1044, 1045, 1142, 1143, 1227, 1410, 1698})


@dataclass(frozen=True)
class ConnectionSettings:
    """Where and as whom to connect. The password never shows in ``repr()`` and is held
    as UTF-8 bytes, so pymysql never encodes it itself (as latin-1, which fails — with
    the offending character in the message — for anything outside latin-1)."""

    host: str = "127.0.0.1"
    port: int = 3306
    user: str = ""
    password: str | bytes = field(default=b"", repr=False)
    unix_socket: str | None = None
    connect_timeout: float = 5.0

    def __post_init__(self) -> None:
        if isinstance(self.password, str):
            try:  # surrogateescape gives back the very bytes of an undecodable environment value
                raw = self.password.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                raw = self.password.encode("utf-8", "surrogatepass")
            object.__setattr__(self, "password", raw)

    def __repr__(self) -> str:
        shown = "<set>" if self.password else "<empty>"
        return (
            f"ConnectionSettings(host={self.host!r}, port={self.port!r}, user={self.user!r}, "
            f"password={shown}, unix_socket={self.unix_socket!r}, connect_timeout={self.connect_timeout!r})"
        )

    def where(self) -> str:
        return self.unix_socket or f"{self.host}:{self.port}"


class Connection:
    """Lazily connected; ``queries`` counts reads and ``rows`` the rows they returned,
    ``writes`` counts GRANT/REVOKE."""

    def __init__(self, backend: str, settings: ConnectionSettings) -> None:
        self.backend = backend
        self.settings = settings
        self._conn: Any = None
        self.queries = 0
        self.round_trips = 0
        self.rows = 0
        self.writes = 0

    def _connect(self) -> Any:
        s = self.settings
        try:
            return pymysql.connect(
                host=s.host,
                port=s.port,
                user=s.user,
                password=s.password,
                unix_socket=s.unix_socket,
                connect_timeout=s.connect_timeout,
                autocommit=True,
                charset="utf8mb4",
                # several SELECTs of one snapshot in one round trip (query_many); every
                # statement text is built by pushdown with its names as escaped parameters
                client_flag=CLIENT.MULTI_STATEMENTS,
            )
        except pymysql.err.MySQLError as exc:
            raise self.translate(exc, f"connecting as {s.user!r} to {s.where()}") from exc

    @property
    def raw(self) -> Any:
        if self._conn is None or not self._conn.open:
            self._conn = self._connect()
        return self._conn

    def query(self, sql: str, args: Sequence[Any] | None = None, *, why: str = "") -> list[tuple[Any, ...]]:
        self.queries += 1
        self.round_trips += 1
        try:
            with self.raw.cursor() as cur:
                cur.execute(sql, args)
                rows = list(cur.fetchall())
        except pymysql.err.MySQLError as exc:
            raise self.translate(exc, why or sql, read_hint) from exc
        self.rows += len(rows)
        return rows

    def query_many(
        self, reads: Mapping[str, tuple[str, Sequence[Any]]], *, why: str = ""
    ) -> dict[str, list[tuple[Any, ...]]]:
        """Several reads in one round trip: the statements are sent together and their
        result sets read in order. Any error drops the connection (a half-read batch
        leaves results behind) and is translated like :meth:`query`'s."""
        self.queries += len(reads)
        self.round_trips += 1
        out: dict[str, list[tuple[Any, ...]]] = {}
        try:
            with self.raw.cursor() as cur:
                texts = [cur.mogrify(sql, tuple(args) if args else None) for sql, args in reads.values()]
                cur.execute(";\n".join(texts))
                for i, key in enumerate(reads):
                    if i:
                        cur.nextset()
                    out[key] = list(cur.fetchall())
        except pymysql.err.MySQLError as exc:
            error = self.translate(exc, why or "reading the grant tables", read_hint)
            self.drop()
            raise error from exc
        self.rows += sum(len(rows) for rows in out.values())
        return out

    def execute(self, sql: str, args: Sequence[Any] | None = None) -> None:
        self.writes += 1
        with self.raw.cursor() as cur:
            cur.execute(sql, args)

    def drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: S110 - closing a dead connection; nothing to report
                pass

    def translate(
        self, exc: BaseException, doing: str, diagnose: Callable[[int, str], str] | None = None
    ) -> PermanentBackendError | TemporaryBackendError:
        code, words = error_parts(exc)
        if code in LOST or isinstance(exc, pymysql.err.InterfaceError):
            self.drop()
            where = self.settings.where()
            return TemporaryBackendError(
                self.backend, f"lost the connection to {where} while {doing}: ({code}) {words}"
            )
        hint = diagnose(code, words) if diagnose and code in DENIED else ""
        return PermanentBackendError(self.backend, f"{hint}server refused {doing}: ({code}) {words}")

    def close(self) -> None:
        self.drop()


def error_parts(exc: BaseException) -> tuple[int, str]:
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    if len(args) >= 2 and isinstance(args[0], int):
        return args[0], str(args[1])
    return 0, str(exc) or type(exc).__name__


def read_hint(code: int, words: str) -> str:
    """For a refused read: which privilege pushdown's account needs."""
    if code == 1142 and " for table " in words:
        verb = words.split(" command denied", 1)[0]
        table = words.rsplit(" for table ", 1)[1]
        return f"pushdown's account lacks the {verb} privilege on {table} (needed to read grants back); "
    return "pushdown's account lacks a privilege it needs to read the server; "
