"""What an operator needs to hear when SQLite refuses a write: whether the
disk is full (and how much is free), or which other process holds the lock.

SQLite says "database or disk is full" (``SQLITE_FULL``) when a write finds no
room, but only "disk I/O error" (``SQLITE_IOERR``) when it cannot even make
its shared-memory file on a full disk at start-up; both are told here as "the
disk holding … is full", with the free space :func:`os.statvfs` reports.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["FULL_BELOW", "describe", "free_bytes", "is_locked", "lock_holders"]

#: free bytes under which a disk I/O error is taken for a full disk: SQLite
#: needs a few pages (and its 32 KiB shared-memory file) to write at all
FULL_BELOW = 1 << 20

_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_FULL = 13  # SQLITE_FULL (not exported by the sqlite3 module)
_IOERR = 10  # SQLITE_IOERR


def _code(exc: sqlite3.Error) -> int | None:
    """The primary result code of a SQLite error, if it carries one."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def is_locked(exc: sqlite3.Error) -> bool:
    """Whether the error is only another connection holding the lock."""
    return _code(exc) in _BUSY


def free_bytes(directory: Path) -> int | None:
    """Bytes an unprivileged writer may still use on ``directory``'s disk
    (None if the system will not say)."""
    try:
        stats = os.statvfs(directory)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def lock_holders(database: Path) -> list[int]:
    """The other processes holding a write lock on the database or its
    shared-memory file, as Linux's ``/proc/locks`` lists them (empty if it
    does not, or says nothing useful). Read-only: opening and closing the
    files themselves would drop this process's own POSIX locks on them."""
    wanted: set[tuple[int, int, int]] = set()
    for path in (database, database.with_name(database.name + "-shm")):
        try:
            stat = path.stat()
        except OSError:
            continue
        wanted.add((os.major(stat.st_dev), os.minor(stat.st_dev), stat.st_ino))
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    holders: set[int] = set()
    me = os.getpid()
    for line in lines:
        fields = line.split()
        if len(fields) < 8 or fields[1] == "->" or fields[3] != "WRITE":
            continue  # a waiter, not a holder; or a read lock
        try:
            pid = int(fields[4])
            major, minor, inode = fields[5].split(":")
            where = (int(major, 16), int(minor, 16), int(inode))
        except ValueError:
            continue
        if where in wanted and pid > 0 and pid != me:
            holders.add(pid)
    return sorted(holders)


def describe(database: Path, exc: sqlite3.Error) -> str:
    """Why a write to ``database`` failed, as an operator reads it: a full disk
    with its free space, a lock with who holds it, or SQLite's own words."""
    code = _code(exc)
    if code in _BUSY:
        holders = lock_holders(database)
        who = f" (pid {', '.join(map(str, holders))})" if holders else ""
        return f"the database {database} is locked by another process{who}"
    if code in (_FULL, _IOERR):
        free = free_bytes(database.parent)
        if code == _FULL or (free is not None and free < FULL_BELOW):
            shown = "" if free is None else f" ({free} bytes free)"
            return f"the disk holding {database} is full{shown}: {exc}"
    return f"cannot write to {database}: {exc}"
