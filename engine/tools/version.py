"""The installed package's version, for ``tulips-demo --version``.

A copy of ``protocol/version.py``'s few lines: the engine imports nothing else
of the project's (the import-linter contracts in pyproject.toml), and the
client may not import the engine, so no one module serves all six scripts.
"""

from __future__ import annotations

import argparse
from importlib import metadata

__all__ = ["add_version_flag", "package_version"]


def package_version() -> str:
    """The installed distribution's version; ``unknown`` when it is not installed."""
    try:
        return metadata.version("gift-of-tulips")
    except metadata.PackageNotFoundError:
        return "unknown"


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` a ``--version`` that prints ``PROG VERSION`` and exits 0."""
    parser.add_argument(
        "--version",
        action="version",
        version=f"{parser.prog} {package_version()}",
        help="print the program's name and version, then exit",
    )
