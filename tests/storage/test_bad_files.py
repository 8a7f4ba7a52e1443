"""A data directory the server cannot or must not use is refused at start:
``python -m server --data-dir ...`` exits with code 1 and one line on stderr
that names the file and the problem — and leaves every byte as it was.

Cases: random bytes, another program's SQLite database, our database from a
newer schema, a directory where the file goes, and data that cannot be
written (a read-only directory, a read-only file, a data directory under a
regular file). Tests run as root in CI, where permission bits stop nobody:
the server is then started without the capabilities that let root ignore
them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), or the test is skipped."""

from __future__ import annotations

import contextlib
import os
import random
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from server.storage import APPLICATION_ID, FILE_NAME, Storage

from .helpers import (
    digest,
    free_port,
    run_until_exit,
    server_command,
    start_expecting_refusal,
    tree,
)

#: Drops the capabilities that let root ignore permission bits from the
#: bounding set, then runs the rest of the command line (``-m server ...``):
#: the process is still root, but file modes apply to it.
AS_ROOT_WITHOUT_DAC = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
    if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
        sys.exit(97)
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


def refused(data_dir: Path) -> list[str]:
    """``python -m server`` on ``data_dir`` (it must not start)."""
    return server_command(data_dir, free_port())


def without_dac(command: list[str]) -> list[str]:
    """``command`` (a ``python ...`` line) run so that file modes bind it even as root."""
    if os.geteuid() != 0:
        return command
    return [sys.executable, "-c", AS_ROOT_WITHOUT_DAC, *command[1:]]


async def permissions_bind(directory: Path) -> None:
    """Skip unless a process started by :func:`without_dac` really cannot write
    in ``directory`` (made read-only by the caller)."""
    probe = directory / "probe"
    code, _, _ = await run_until_exit(
        without_dac([sys.executable, "-c", f"open({str(probe)!r}, 'w')"])
    )
    if probe.exists():
        probe.unlink()
    if code == 97:
        pytest.skip("running as root without CAP_SETPCAP: cannot drop the DAC capabilities")
    if code == 0:
        pytest.skip(
            "permission bits do not stop writes here (root, or a filesystem that ignores them)"
        )


@contextlib.contextmanager
def mode(path: Path, bits: int) -> Iterator[None]:
    """``path`` with these permission bits, restored afterwards (so it can be cleaned up)."""
    old = path.stat().st_mode & 0o7777
    path.chmod(bits)
    try:
        yield
    finally:
        path.chmod(old)


def our_database(data_dir: Path) -> None:
    """A real (empty) Gift of Tulips database, closed cleanly."""
    storage = Storage(data_dir)
    storage.open()
    storage.close()


def random_bytes(data_dir: Path) -> None:
    (data_dir / FILE_NAME).write_bytes(random.Random(1).randbytes(16384))


def other_program(data_dir: Path, journal: str = "DELETE", application_id: int = 0) -> None:
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        db.execute(f"PRAGMA journal_mode = {journal}")
        db.execute(f"PRAGMA application_id = {application_id}")
        if application_id == 0:
            db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
            db.execute("INSERT INTO notes (text) VALUES ('not yours')")
        db.commit()


def newer_schema(data_dir: Path) -> None:
    with contextlib.closing(sqlite3.connect(data_dir / FILE_NAME)) as db:
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute("PRAGMA user_version = 99")
        db.execute("CREATE TABLE players (id TEXT PRIMARY KEY, future TEXT)")
        db.commit()


def a_directory(data_dir: Path) -> None:
    (data_dir / FILE_NAME).mkdir()
    (data_dir / FILE_NAME / "inside").write_text("keep me")


#: (id, how the data directory is prepared, what the one line must say)
CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("random-bytes", random_bytes, r"is not a Gift of Tulips database"),
    ("other-program", other_program, r"database of another program"),
    (
        "other-program-wal",
        lambda d: other_program(d, journal="WAL"),
        r"database of another program",
    ),
    (
        "other-program-id",
        lambda d: other_program(d, application_id=0x4D4F4F46),
        r"another program \(application_id 0x4d4f4f46\)",
    ),
    ("newer-schema", newer_schema, r"newer version of this server \(schema 99"),
    ("a-directory", a_directory, r"exists and is not a file"),
]


def check_refusal(code: int | None, out: str, err: str, named: Path, problem: str) -> None:
    """Exit code 1, nothing on stdout, one line on stderr naming the file and the problem."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert code is not None, f"the server started:\n{err}"
    assert code == 1, f"exit code {code}; stderr:\n{err}"
    assert out == ""
    assert len(lines) == 1, f"not one line:\n{err}"
    assert "ERROR" in lines[0]
    assert str(named) in lines[0], f"the message does not name {named}: {lines[0]}"
    assert re.search(problem, lines[0]), f"the message does not say {problem!r}: {lines[0]}"


@pytest.mark.parametrize(
    ("prepare", "problem"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
async def test_a_file_that_is_not_ours_is_refused_untouched(
    tmp_path: Path, prepare: Callable[[Path], None], problem: str
) -> None:
    """Exit code 1 and one line naming the file and the problem; every byte
    in the data directory is as it was (and no file was added)."""
    data = tmp_path / "data"
    data.mkdir()
    prepare(data)
    before = tree(data)
    code, out, err = await start_expecting_refusal(refused(data))
    check_refusal(code, out, err, data / FILE_NAME, problem)
    assert tree(data) == before


async def test_an_empty_file_is_a_new_database(tmp_path: Path) -> None:
    """A zero-byte file is an empty SQLite database, not a foreign one: it is
    taken and made ours (this is what ``touch tulips.sqlite3`` gives)."""
    (tmp_path / FILE_NAME).touch()
    our_database(tmp_path)
    with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


async def test_an_unwritable_data_directory_is_refused(tmp_path: Path) -> None:
    """A fresh data directory the server may not write in (mode 0o500): exit 1,
    one line naming the database file, and nothing created."""
    data = tmp_path / "data"
    data.mkdir()
    with mode(data, 0o500):
        await permissions_bind(data)
        code, out, err = await start_expecting_refusal(without_dac(refused(data)))
        check_refusal(code, out, err, data / FILE_NAME, r"cannot use .*: unable to open")
        assert tree(data) == {}


async def test_our_database_in_an_unwritable_directory_is_refused_untouched(
    tmp_path: Path,
) -> None:
    """Our own database, but in a directory the server cannot write in (so no
    write-ahead log): refused at start, the file unchanged."""
    data = tmp_path / "data"
    data.mkdir()
    our_database(data)
    before = tree(data)
    with mode(data, 0o500):
        await permissions_bind(data)
        code, out, err = await start_expecting_refusal(without_dac(refused(data)))
    check_refusal(code, out, err, data / FILE_NAME, r"cannot use .*: .*(readonly|unable to open)")
    assert tree(data) == before


async def test_a_read_only_database_file_is_refused(tmp_path: Path) -> None:
    """Our database, but the file may not be written (mode 0o400): refused at
    start with one line — not a server that starts and then cannot store a thing."""
    data = tmp_path / "data"
    data.mkdir()
    our_database(data)
    database = data / FILE_NAME
    probe = tmp_path / "probe"
    probe.mkdir()
    with mode(probe, 0o500):
        await permissions_bind(probe)
    before = digest(database)
    with mode(database, 0o400):
        code, out, err = await start_expecting_refusal(without_dac(refused(data)))
    assert code is not None, f"the server started on a read-only database:\n{err}"
    problem = r"(read-only|readonly|cannot write|not writable|permission)"
    check_refusal(code, out, err, database, problem)
    assert digest(database) == before


async def test_a_data_directory_under_a_regular_file_is_refused(tmp_path: Path) -> None:
    """``--data-dir`` below a regular file: the directory cannot be made. One
    line naming it; the file is unchanged. (Works as root too.)"""
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"just a file")
    data = blocker / "data"
    code, out, err = await start_expecting_refusal(refused(data))
    check_refusal(code, out, err, data, r"cannot create the data directory")
    assert blocker.read_bytes() == b"just a file"
