"""The real server with storage faults, for the crash and shutdown tests::

    python -m tests.storage.killable_server [--kill-after-commits N]
        [--commit-delay SECONDS [--slow-from-commit N]] SERVER FLAGS...

It installs hooks on the server's storage (:attr:`Storage.before_commit` and
:attr:`Storage.after_commit`, both run in the writer thread), then hands the
remaining flags to ``tulips-server``'s own entry point, :func:`server.cli.main`.
None of this ships with the server: what users run has no fault switch.

* ``--kill-after-commits N``: SIGKILL itself right after its Nth commit — an
  action on disk that nobody has been told of yet.
* ``--kill-at-ratings before|after``: SIGKILL itself when a finished match's
  result and ratings are about to be queued for storing (its final action is
  on disk, its ratings are not), or right after they are stored (before
  anyone is told).
* ``--commit-delay S``: every commit (from the Nth on, with
  ``--slow-from-commit N``) waits S seconds just before its COMMIT, as on a
  slow disk (a FUSE file system, a dying SD card).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from typing import Any

from server.app import TulipsServer
from server.cli import main as server_main


def _faults(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """This runner's own flags, and the server's."""
    parser = argparse.ArgumentParser(
        prog="killable_server", description=__doc__, allow_abbrev=False, add_help=False
    )
    parser.add_argument("--kill-after-commits", type=int, default=None)
    parser.add_argument("--commit-delay", type=float, default=0.0)
    parser.add_argument("--slow-from-commit", type=int, default=1)
    parser.add_argument("--kill-at-ratings", choices=("before", "after"), default=None)
    return parser.parse_known_args(argv)


def install(server: TulipsServer, faults: argparse.Namespace) -> None:
    """Put the faults on the server's storage (before it starts)."""
    storage = server.lobby.storage
    assert storage is not None, "faults need storage (a --data-dir)"
    if faults.kill_after_commits is not None:
        limit = faults.kill_after_commits

        def kill(count: int) -> None:
            if count >= limit:
                os.kill(os.getpid(), signal.SIGKILL)

        storage.after_commit = kill
    if faults.kill_at_ratings is not None:
        write_sql, when = storage.write_sql, faults.kill_at_ratings

        def die(*_: object) -> None:
            os.kill(os.getpid(), signal.SIGKILL)

        def write_and_die(writes: Any) -> Any:
            results = any(sql.startswith("INSERT INTO results") for sql, _ in writes)
            if results and when == "before":
                die()
            future = write_sql(writes)
            if results:
                future.add_done_callback(die)  # before the waiting ledger resumes
            return future

        storage.write_sql = write_and_die  # type: ignore[method-assign]
    if faults.commit_delay > 0:
        delay, first = faults.commit_delay, faults.slow_from_commit

        def slow(count: int) -> None:
            if count >= first:
                time.sleep(delay)

        storage.before_commit = slow


def main(argv: list[str] | None = None) -> int:
    """Run ``tulips-server`` with the faults the command line asks for."""
    faults, rest = _faults(sys.argv[1:] if argv is None else argv)
    return server_main(rest, setup=lambda server: install(server, faults))


if __name__ == "__main__":
    sys.exit(main())
