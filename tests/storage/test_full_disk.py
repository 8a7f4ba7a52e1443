"""Issue 29, "the full-disk message says the disk is full": on a real full
disk — a small tmpfs mounted in a private mount namespace (``unshare -m``),
filled up — the server's start-up error says that the disk holding the
database is full, and how much is free, whether the database is new (SQLite
says "database or disk is full") or already there (SQLite says only "disk I/O
error", unable to make its shared-memory file); so does a write that finds no
room while the server runs. Skipped where mounting is not permitted."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import free_port, run_until_exit, server_command, server_env

#: small enough to fill in a moment, big enough for an empty database
TMPFS_BYTES = 512 * 1024


def _can_mount(where: Path) -> bool:
    """Whether this process may mount a tmpfs in a private mount namespace."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    where.mkdir(parents=True, exist_ok=True)
    mount = f"mount -t tmpfs -o size=64k tmpfs {shlex.quote(str(where))}"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", mount],
        capture_output=True,
        timeout=10,
        check=False,
    )
    return probe.returncode == 0


@pytest.fixture
def disk(tmp_path: Path) -> Path:
    """Where the small disk is mounted (only inside :func:`on_full_disk`'s namespace)."""
    mount = tmp_path / "disk"
    if not _can_mount(mount):
        pytest.skip("cannot mount a tmpfs here (unshare -m and mount need CAP_SYS_ADMIN)")
    return mount


async def on_full_disk(
    disk: Path, command: list[str], before: list[str] | None = None, *, fill: bool = True
) -> str:
    """Mount a fresh small tmpfs on ``disk`` in a private mount namespace, run
    ``before`` (if any), fill the disk up (unless not ``fill``), then run
    ``command``: what it wrote (stdout and stderr); it must have failed."""
    mount = shlex.quote(str(disk))
    steps = [f"mount -t tmpfs -o size={TMPFS_BYTES} tmpfs {mount}"]
    if before is not None:
        steps.append(shlex.join(before))
    if fill:
        steps.append(f"(dd if=/dev/zero of={mount}/filler bs=4096 2>/dev/null || true)")
    steps.append(f"exec {shlex.join(command)}")
    code, out, err = await run_until_exit(
        ["unshare", "-m", "sh", "-ec", " && ".join(steps)], timeout=60, env=server_env()
    )
    assert code != 0, f"it did not fail on a full disk:\n{out}\n{err}"
    return out + err


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


_MAKE_DATABASE = """
import sys
from pathlib import Path
from server.storage import Storage
storage = Storage(Path(sys.argv[1]))
storage.open()
storage.close()
"""


async def test_a_full_disk_at_start_up_says_the_disk_is_full(disk: Path) -> None:
    """Issue 29: a new data directory on a full disk — the server exits with
    one line saying the disk holding the database is full, with the free
    space, not only SQLite's words."""
    data = disk / "data"
    said = await on_full_disk(disk, server_command(data, free_port()))
    assert f"the disk holding {data / 'tulips.sqlite3'} is full (" in said, said
    assert "bytes free)" in said


async def test_an_existing_database_on_a_full_disk_says_the_disk_is_full(disk: Path) -> None:
    """Issue 29: the database is already there and the disk fills up while the
    server is down: SQLite says "disk I/O error" at start-up (it cannot make
    its shared-memory file); the server says the disk is full."""
    data = disk / "data"
    make = [*_python(_MAKE_DATABASE), str(data)]
    said = await on_full_disk(disk, server_command(data, free_port()), before=make)
    assert f"the disk holding {data / 'tulips.sqlite3'} is full (" in said, said
    assert "disk I/O error" in said  # SQLite's own words follow, for the record


_WRITE_UNTIL_FULL = """
import asyncio, sys
from pathlib import Path
from server.storage import PlayerRow, Storage, StorageError

async def main() -> None:
    data = Path(sys.argv[1])
    storage = Storage(data)
    storage.open()
    with open(data.parent / "filler", "wb") as filler:  # the disk fills up under it
        try:
            while True:
                filler.write(bytes(65536))
                filler.flush()
        except OSError:
            pass
    try:
        for n in range(10_000):
            await storage.save_player(PlayerRow(f"p{n}", "x" * 4000, f"h{n}"), 1.0)
        print("never full")
    except StorageError as exc:
        print("refused:", exc)
        sys.exit(3)
    finally:
        await storage.aclose()

asyncio.run(main())
"""


async def test_a_write_that_finds_the_disk_full_says_so(disk: Path) -> None:
    """Issue 29: while the server runs, a write that finds no room fails with
    "the disk holding … is full (N bytes free)" — what a paused match and a
    refused player are logged with."""
    data = disk / "data"
    said = await on_full_disk(disk, [*_python(_WRITE_UNTIL_FULL), str(data)], fill=False)
    assert f"refused: the disk holding {data / 'tulips.sqlite3'} is full (" in said, said
