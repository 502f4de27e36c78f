"""Exclusive advisory locks on open files, on POSIX and on Windows.

The budget file and the audit log take an exclusive lock on a descriptor
before they read and rewrite shared state. This module hides the platform:

* **POSIX** (``fcntl`` importable): ``fcntl.flock(fd, LOCK_EX)``, released
  by ``flock(fd, LOCK_UN)`` or when the descriptor is closed. The lock is on
  the whole file and blocks until granted.
* **Windows** (``msvcrt`` importable, no ``fcntl``): ``msvcrt.locking`` of
  one byte at offset :data:`WINDOWS_LOCK_OFFSET`, far beyond the end of any
  real file (Windows locks are mandatory: locking a byte that holds data
  would stop other descriptors from reading it). ``LK_LOCK`` gives up after
  about ten seconds; :func:`lock_file` retries while the error says the byte
  is busy, so it blocks like ``flock``; any other error is raised. The
  descriptor's position is restored.
* **Neither**: importing this module still works (so ``import securedp``
  works everywhere); :func:`lock_file` raises :class:`OSError` saying that
  the platform has no file locking, before anything is read or written.

Which implementation is used is decided at import time; :data:`KIND` names
it (``"fcntl"``, ``"msvcrt"`` or ``"none"``).
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
from collections.abc import Iterator
from types import ModuleType


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:  # fcntl on Windows, msvcrt elsewhere
        return None


fcntl = _optional("fcntl")
msvcrt = _optional("msvcrt")

WINDOWS_LOCK_OFFSET = (1 << 40) + (1 << 31) - 16
"""Where the one locked byte sits on Windows: beyond the end of any real file
(1 TiB; its low 32 bits alone are ~2 GiB)."""

_BUSY = frozenset(getattr(errno, name) for name in ("EDEADLK", "EDEADLOCK", "EACCES") if hasattr(errno, name))
"""The errors ``msvcrt.locking(LK_LOCK)`` raises when the byte stayed locked by another process for ten seconds."""

KIND = "fcntl" if fcntl is not None else "msvcrt" if msvcrt is not None else "none"


def lock_file(fd: int) -> None:
    """Block until this process holds an exclusive lock on the open file ``fd``."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    elif msvcrt is not None:
        while True:
            try:
                _windows_locking(fd, msvcrt.LK_LOCK)
                return
            except OSError as error:  # noqa: PERF203 - a retry loop whose attempts block for seconds
                if error.errno not in _BUSY:
                    raise
                # LK_LOCK gave up after its ten one-second attempts: keep waiting
    else:
        raise OSError("this platform has neither fcntl nor msvcrt: securedp cannot lock the budget or audit file")


def unlock_file(fd: int) -> None:
    """Release the lock :func:`lock_file` took on ``fd`` (closing ``fd`` releases it too); never raises."""
    with contextlib.suppress(OSError):
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        elif msvcrt is not None:
            _windows_locking(fd, msvcrt.LK_UNLCK)


@contextlib.contextmanager
def locked(fd: int) -> Iterator[None]:
    """Hold an exclusive lock on ``fd`` for the duration of the ``with`` block."""
    lock_file(fd)
    try:
        yield
    finally:
        unlock_file(fd)


def _windows_locking(fd: int, mode: int) -> None:
    assert msvcrt is not None
    position = os.lseek(fd, 0, os.SEEK_CUR)
    os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
    try:
        msvcrt.locking(fd, mode, 1)
    finally:
        os.lseek(fd, position, os.SEEK_SET)
