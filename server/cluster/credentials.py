"""Secrets a node is given without its command line (which every local user
can read with ``ps``): the cluster key from ``--workers`` and Redis's password.

Each is read once and taken out of the environment at once, so no process the
node starts (a browser tab's client, a worker) inherits it; ``--workers``
hands its workers what they need explicitly (:func:`worker_env`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from ..config import REDIS_PASSWORD_ENV

__all__ = [
    "REDIS_PASSWORD_ENV",
    "SecretFileError",
    "read_private",
    "take_env",
    "worker_env",
]


class SecretFileError(Exception):
    """A file of secrets that cannot be used (the message says why and what to do)."""


def take_env(name: str) -> str | None:
    """The value of the environment variable ``name``, which is removed from
    this process's environment (and so from its children's)."""
    return os.environ.pop(name, None)


def read_private(path: Path, what: str, why: str) -> str:
    """The text of ``path``, the ``what`` (named in errors); a file other users
    may read is refused, ``why`` saying what they could do with it."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SecretFileError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SecretFileError(f"cannot read {what} {path}: {exc}") from None
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SecretFileError(
            f"{what} {path} may be read by other users (mode {stat.filemode(mode)}); {why}:"
            f" chmod 600 {path}"
        )
    return text


def worker_env(base: Mapping[str, str], secrets: Mapping[str, str | None]) -> dict[str, str]:
    """The environment of a worker: ``base`` with the ``secrets`` that are set."""
    return {**base, **{name: value for name, value in secrets.items() if value is not None}}
