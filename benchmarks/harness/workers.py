"""Split work over forked processes that share the parent's memory copy-on-write."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

C = TypeVar("C")
R = TypeVar("R")


def run_forked(fn: Callable[[C], R], chunks: Sequence[C]) -> list[R]:
    """``fn(chunk)`` in one forked child per chunk, results in chunk order.

    A large model built before the fork is shared, not copied. With one chunk, or where
    ``fork`` does not exist, the chunks run here, one after the other. A child that
    fails raises its error here.
    """
    if len(chunks) == 1 or not hasattr(os, "fork"):
        return [fn(chunk) for chunk in chunks]
    children = [_spawn(fn, chunk) for chunk in chunks]
    return [cast(R, _collect(pid, read_fd)) for pid, read_fd in children]


def _spawn(fn: Callable[[C], R], chunk: C) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never fall through into the parent's code
        os.close(read_fd)
        code = 0
        try:
            payload = pickle.dumps(fn(chunk))
        except BaseException as exc:
            payload, code = pickle.dumps(RuntimeError(f"worker failed: {exc!r}")), 1
        with os.fdopen(write_fd, "wb") as fh:
            fh.write(payload)
        os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int) -> object:
    with os.fdopen(read_fd, "rb") as fh:
        result = pickle.loads(fh.read())
    os.waitpid(pid, 0)
    if isinstance(result, BaseException):
        raise result
    return result
