"""``python -m server.docs``: write the README's table of ``tulips-server``'s options.

The table lives in README.md between marker comments::

    <!-- BEGIN GENERATED: server-options -->
    ...
    <!-- END GENERATED: server-options -->

:func:`options_table` builds it from :func:`server.cli.build_parser`, itself
built from the settings declared on :class:`~server.config.ServerConfig`: each
option's help as ``--help`` shows it, its default included. ``--write``
replaces the text between the markers; ``--check`` exits with status 1 when
it differs, so a test keeps the README and the command line together.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from protocol.generated import write_or_check

from .cli import build_parser, help_text
from .config import ServerConfig
from .settings import declared

__all__ = ["README", "check", "main", "options_table", "write"]

#: The document the table is written into.
README = Path(__file__).resolve().parents[1] / "README.md"
_SECTION = "server-options"
_MARKED = re.compile(
    rf"(<!-- BEGIN GENERATED: {_SECTION} -->\n)(?P<body>.*?)(<!-- END GENERATED: {_SECTION} -->)",
    re.S,
)


def _invocation(action: argparse.Action) -> str:
    """The option as its usage line spells it: ``--web [PORT]``, ``--sync {full,normal}``."""
    flag = action.option_strings[-1]
    if action.nargs == 0:
        return flag
    if action.metavar is not None:
        value = str(action.metavar)
    elif action.choices is not None:
        value = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        value = action.dest.upper()
    return f"{flag} [{value}]" if action.nargs == "?" else f"{flag} {value}"


def options_table() -> str:
    """The Markdown table of every ``tulips-server`` option, what it is for and its
    default, in the order ``--help`` lists them."""
    readme_defaults = {
        field.name: how.readme_default
        for field, how in declared(ServerConfig)
        if how.readme_default is not None
    }
    rows = ["| Option | What it is for |", "| --- | --- |"]
    actions = [a for group in build_parser()._action_groups for a in group._group_actions]
    for action in actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        shown = readme_defaults.get(action.dest, action.default)
        text = help_text(action, shown).replace("|", "\\|")
        rows.append(f"| `{_invocation(action)}` | {text} |")
    return "\n".join(rows) + "\n"


def _render(document: str) -> str:
    found = _MARKED.search(document)
    if found is None:
        raise ValueError(f"no <!-- BEGIN GENERATED: {_SECTION} --> section")
    return document[: found.start("body")] + options_table() + document[found.end("body") :]


def check(path: Path = README) -> bool:
    """Whether the table in ``path`` is the one :func:`options_table` makes."""
    document = path.read_text(encoding="utf-8")
    return _render(document) == document


def write(path: Path = README) -> None:
    """Rewrite the table in ``path``."""
    document = path.read_text(encoding="utf-8")
    path.write_text(_render(document), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Check (``--check``) or rewrite (``--write``) the README's table of server options."""

    def write_table(path: Path) -> list[Path]:
        write(path)
        return [path]

    return write_or_check(
        argv,
        prog="python -m server.docs",
        description="Write or check the table of tulips-server's options in README.md"
        " (between its BEGIN/END GENERATED markers) from the settings' declarations.",
        default=README,
        write=write_table,
        stale=lambda path: [] if check(path) else ["the server options"],
    )


if __name__ == "__main__":
    raise SystemExit(main())
