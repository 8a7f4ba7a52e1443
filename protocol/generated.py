"""The command of a file written from the definitions — PROTOCOL.md's tables,
the JSON Schema and AsyncAPI files, the README's table of server options:
``--write`` writes it anew, ``--check`` exits 1 and names what is stale, so
that a test and a person run the same check."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["write_or_check"]


def write_or_check(
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    default: Path,
    write: Callable[[Path], Sequence[Path]],
    stale: Callable[[Path], Sequence[str]],
    flag: str = "--path",
) -> int:
    """Run ``prog``: ``--write`` calls ``write`` (which returns the paths it
    wrote), ``--check`` ``stale`` (which names what differs, nothing when
    current); ``flag`` names the file or folder, ``default`` unless given."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if anything is stale")
    mode.add_argument("--write", action="store_true", help="write it anew")
    parser.add_argument(flag, dest="where", type=Path, default=default, help="where it is")
    args = parser.parse_args(argv)
    where: Path = args.where
    if args.write:
        for path in write(where):
            print(f"wrote {path}")
        return 0
    found = stale(where)
    if found:
        print(f"{where} is stale in: {', '.join(found)}; run {prog} --write", file=sys.stderr)
        return 1
    print(f"{where} is up to date")
    return 0
