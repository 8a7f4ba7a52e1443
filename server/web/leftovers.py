"""The front's private directory, and what a killed front left of one.

Each running front makes one ``tulips-web-*`` directory in the temporary
directory (mode 0700), with an ``owner`` file saying which process made it
(its pid and start time, so a reused pid is not taken for it). A front
stopped cleanly deletes its own; one killed (SIGKILL, a crash) cannot, so
every front removes, as it starts, the ``tulips-web-*`` directories of this
user whose owner process is gone. Nothing else is touched: not another
user's, not a symbolic link, not one without an owner file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
import tempfile
from pathlib import Path

__all__ = ["OWNER_FILE", "PREFIX", "make_private_directory", "remove_stale"]

log = logging.getLogger("server.web")

PREFIX = "tulips-web-"
OWNER_FILE = "owner"


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), None if it is gone;
    "" where ``/proc`` cannot say (not Linux) but the process exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        return text[text.rindex(")") + 2 :].split()[19]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return ""


def make_private_directory(parent: Path | None = None) -> Path:
    """A new ``tulips-web-*`` directory, owned by this process (see the module)."""
    directory = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    (directory / OWNER_FILE).write_text(f"{os.getpid()} {_started(os.getpid()) or ''}\n")
    return directory


def _owner_alive(directory: Path) -> bool:
    try:
        pid_text, _, started = (directory / OWNER_FILE).read_text().strip().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return True  # not ours to judge
    now = _started(pid)
    return now is not None and (not started or not now or now == started)


def remove_stale(parent: Path | None = None) -> list[Path]:
    """Remove this user's ``tulips-web-*`` directories (in ``parent``, by default
    the temporary directory) whose owner process is gone; those removed."""
    root = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    removed = []
    with contextlib.suppress(OSError):
        for entry in root.glob(PREFIX + "*"):
            try:
                info = entry.lstat()
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            if _owner_alive(entry):
                continue
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    if removed:
        log.info("removed %d browser-front directories left by a killed server", len(removed))
    return removed
