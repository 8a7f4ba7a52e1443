"""One declaration per server setting: its help, its flag, how its text is read.

A :class:`~server.config.ServerConfig` field that ``tulips-server`` can be
told is declared with :func:`setting`, which puts a :class:`Setting` in the
field's metadata next to its default. ``server/cli.py`` builds the command
line from those declarations (:func:`declared`), so the field, its flag, its
help and the default ``--help`` shows cannot drift apart, and the README's
table of options is made from the same parser.

The readers below turn a flag's text into a value or refuse it with one clear
line (argparse then exits with status 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = [
    "FROM_FIELD",
    "HIDDEN",
    "Setting",
    "check_node_id",
    "command_line_default",
    "days",
    "declared",
    "heartbeat",
    "ipv6_prefix",
    "minutes",
    "node_id",
    "origin",
    "port",
    "positive_int",
    "positive_seconds",
    "rate",
    "redis_url",
    "seconds",
    "setting",
    "workers",
    "ws_url",
]

#: :attr:`Setting.help` of a flag ``--help`` does not show (one for the server's own use).
HIDDEN = argparse.SUPPRESS
#: The key of a field's :class:`Setting` in its metadata.
_KEY = "tulips-server setting"


class _FromField:
    """:attr:`Setting.command_line_default` when it is the field's own default."""

    def __repr__(self) -> str:
        return "FROM_FIELD"


#: :attr:`Setting.command_line_default` when it is the field's own default.
FROM_FIELD: Any = _FromField()


@dataclasses.dataclass(frozen=True, slots=True)
class Setting:
    """How one config field is set on the command line and what ``--help`` says of it.

    The flag's value becomes the field's: multiplied by :attr:`unit` (a flag
    in minutes for a field in seconds), looked up in :attr:`choices` when they
    map words to values, collected into a tuple for a tuple field (the flag is
    then repeatable), and a bool field is a switch that turns the default over.
    """

    #: what the setting is for, as ``--help`` says it (its default is added)
    help: str
    #: the flag; "" for ``--`` and the field's name with dashes
    flag: str = ""
    #: reads the flag's text (argparse's ``type``); None: the text itself
    parse: Callable[[str], Any] | None = None
    #: the value's name in ``--help`` (None: argparse's, the flag in capitals)
    metavar: str | None = None
    #: the words the flag takes; a mapping gives the field's value for each word
    choices: tuple[str, ...] | Mapping[str, object] | None = None
    #: the field's value is the flag's times this (60: minutes on the command line)
    unit: int | float = 1
    #: the value of the flag given with none (``--web`` alone); None: it needs one
    const: object = None
    #: the default of a server started from the command line, when it is not the
    #: field's (which suits a config built in a test: no announcing, no disk)
    command_line_default: Any = FROM_FIELD
    #: the title of the group of options ``--help`` lists it in ("": the main one)
    group: str = ""
    #: the default as the README states it, when it depends on the machine
    #: (``--help`` shows the machine's own)
    readme_default: str | None = None

    def flag_for(self, name: str) -> str:
        """The flag that sets the field ``name``."""
        return self.flag or "--" + name.replace("_", "-")

    def to_flag(self, value: Any) -> Any:
        """A field's value as the flag would give it (the default ``--help`` shows)."""
        if isinstance(self.choices, Mapping):
            return next(word for word, meant in self.choices.items() if meant == value)
        if self.unit == 1 or value is None:
            return value
        if isinstance(value, int) and isinstance(self.unit, int):
            return value // self.unit
        return value / self.unit

    def to_field(self, value: Any) -> Any:
        """The flag's value (as argparse read it) as the field holds it."""
        if isinstance(self.choices, Mapping):
            return self.choices[value]
        if isinstance(value, list):
            return tuple(value)
        if self.unit == 1 or value is None:
            return value
        return value * self.unit


def setting(default: Any, help: str, **how: Any) -> Any:
    """A dataclass field with ``default``, set by a flag as :class:`Setting` ``(help, **how)``."""
    return dataclasses.field(default=default, metadata={_KEY: Setting(help, **how)})


def declared(config: type[Any]) -> Iterator[tuple[dataclasses.Field[Any], Setting]]:
    """Each field of the dataclass ``config`` declared with :func:`setting`, in order."""
    for field in dataclasses.fields(config):
        found = field.metadata.get(_KEY)
        if found is not None:
            yield field, found


def command_line_default(field: dataclasses.Field[Any], how: Setting) -> Any:
    """The value of the setting ``field`` in a server started with no flags."""
    if how.command_line_default is not FROM_FIELD:
        return how.command_line_default
    return field.default


def _number(text: str, kind: type[int] | type[float]) -> float:
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def _above_zero(text: str, what: str) -> float:
    value = _number(text, float)
    if not 0 < value < math.inf:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be {what}, more than 0, got {text}")
    return value


def positive_int(text: str) -> int:
    """A whole number, 1 or more."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def ipv6_prefix(text: str) -> int:
    """An IPv6 prefix length, 16 to 128."""
    value = int(_number(text, int))
    if not 16 <= value <= 128:
        raise argparse.ArgumentTypeError(f"must be a prefix length from 16 to 128, got {value}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 to 65535 (0: the system picks a free one)."""
    value = int(_number(text, int))
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {value}")
    return value


def seconds(text: str) -> float:
    """A number of seconds, 0 or more."""
    value = _number(text, float)
    if not 0 <= value < math.inf:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number of seconds, 0 or more, got {text}")
    return value


def positive_seconds(text: str) -> float:
    """A number of seconds, more than 0."""
    return _above_zero(text, "a number of seconds")


def minutes(text: str) -> float:
    """A number of minutes, more than 0."""
    return _above_zero(text, "a number of minutes")


def days(text: str) -> float:
    """A number of days, more than 0."""
    return _above_zero(text, "a number of days")


def rate(text: str) -> float:
    """A rate, more than 0 a second (or a minute)."""
    value = _number(text, float)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be more than 0 messages a second, got {text}")
    return value


def origin(text: str) -> str:
    """A web page origin as a browser sends it (``http(s)://host[:port]``), or ``*``."""
    if text == "*":
        return text
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise argparse.ArgumentTypeError(
            f"an origin is * or http(s)://host[:port], as a browser sends it; got {text!r}"
        )
    return text


def redis_url(text: str) -> str:
    """A Redis URL: ``redis://``, ``rediss://`` or ``unix://``."""
    if urllib.parse.urlsplit(text).scheme not in ("redis", "rediss", "unix"):
        raise argparse.ArgumentTypeError(f"expected redis://HOST:PORT/DB, got {text!r}")
    return text


def ws_url(text: str) -> str:
    """A WebSocket URL with a host: ``ws://HOST:PORT`` or ``wss://``."""
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"expected ws://HOST:PORT, got {text!r}")
    return text


_NODE_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")


def check_node_id(text: str) -> str:
    """``text`` if it is a valid node id (1–40 of A–Z a–z 0–9 _ -), else ValueError."""
    if not _NODE_ID.fullmatch(text):
        raise ValueError(f"a node id is 1 to 40 letters, digits, _ or -; got {text!r}")
    return text


def node_id(text: str) -> str:
    """A cluster node's id (:func:`check_node_id`)."""
    try:
        return check_node_id(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def workers(text: str) -> int:
    """A number of worker processes, 1 to 64."""
    value = int(_number(text, int))
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"must be 1 to 64, got {value}")
    return value


def heartbeat(text: str) -> float:
    """Seconds between a cluster node's heartbeats, 0.05 to 60."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0.05 <= value <= 60:
        raise argparse.ArgumentTypeError(f"must be 0.05 to 60 seconds, got {text}")
    return value
