"""The installed package's version, for every console script's ``--version``.

Here because protocol/ is the one package both the client and the server may
import (the import-linter contracts in pyproject.toml). The engine may import
neither, so ``tulips-demo`` has its own copy of these few lines
(``engine/tools/version.py``).
"""

from __future__ import annotations

import argparse
from importlib import metadata

__all__ = ["DISTRIBUTION", "add_version_flag", "package_version"]

#: The distribution's name in pyproject.toml.
DISTRIBUTION = "gift-of-tulips"


def package_version() -> str:
    """The installed distribution's version; ``unknown`` when it is not installed
    (the source tree run without ``pip install``)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def add_version_flag(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """Give ``parser`` a ``--version`` that prints ``PROG VERSION`` and exits 0
    (``help``: the flag's help text, for a translated command line)."""
    parser.add_argument(
        "--version",
        action="version",
        version=f"{parser.prog} {package_version()}",
        help=help or "print the program's name and version, then exit",
    )
