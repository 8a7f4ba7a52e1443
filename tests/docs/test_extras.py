"""What an install without extras can run, as README's "Installing" promises.

The base dependencies serve the server, protocol, engine, SDK and bots;
Textual (the ``client`` extra) only the terminal app; msgpack (``dev``) only
examples, benchmarks and tests; jsonschema (``dev``) only tests; uvloop
(``uvloop``) only ``--loop uvloop``.
Each check runs a fresh interpreter in which the packages of the extras cannot
be imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: Importable names of the packages that only the extras bring.
EXTRAS_ONLY = ("textual", "rich", "msgpack", "uvloop", "jsonschema")
#: Every module an install without extras must be able to import.
BASE_MODULES = (
    "engine",
    "engine.lab.arena",
    "engine.tools.demo",
    "protocol",
    "protocol.docs",
    "protocol.schema",
    "server.app",
    "server.cli",
    "server.lan.discovery",
    "server.lan.tls",
    "client.sdk",
    "client.discovery",
    "client.trust",
    "client.bots",
    "client.botcli",
    "client.loadgen.cli",
    "client.loadgen.reference",
    "client.tui.cli",
)


def _without_extras(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where the extras' packages are missing."""
    block = f"import sys\nfor name in {EXTRAS_ONLY!r}:\n    sys.modules[name] = None\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    return subprocess.run(
        [sys.executable, "-c", block + textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _names(requirements: list[str]) -> set[str]:
    return {r.split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip() for r in requirements}


def test_base_dependencies_leave_out_textual_and_msgpack() -> None:
    """A server-only install pulls neither Textual nor msgpack (openskill rates its
    matches, issue 31); dev pulls everything."""
    extras = PROJECT["optional-dependencies"]
    assert _names(PROJECT["dependencies"]) == {
        "msgspec",
        "websockets",
        "platformdirs",
        "zeroconf",
        "cryptography",
        "numpy",
        "openskill",
    }
    assert _names(extras["client"]) == {"textual"}
    assert {"gift-of-tulips", "msgpack", "pytest"} <= _names(extras["dev"])
    assert "gift-of-tulips[client]" in extras["dev"]


def test_server_protocol_engine_and_sdk_import_without_the_extras() -> None:
    """Every module of a server-only install imports with Textual, Rich and msgpack absent."""
    result = _without_extras(
        f"""
        import importlib
        for module in {BASE_MODULES!r}:
            importlib.import_module(module)
        from server.cli import main
        main(["--help"])
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: tulips-server")


def test_server_on_uvloop_without_uvloop_says_how_to_install_it() -> None:
    """``tulips-server --loop uvloop`` without the extra: one line with the pip command."""
    result = _without_extras(
        """
        from server.cli import main
        raise SystemExit(main(["--loop", "uvloop", "--no-storage", "--host", "127.0.0.1"]))
        """
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "pip install 'gift-of-tulips[uvloop]'" in result.stderr


def test_terminal_client_without_textual_says_how_to_install_it() -> None:
    """``tulips play`` without Textual: one clear line and the pip command, no traceback."""
    result = _without_extras(
        """
        from client.tui.cli import main
        raise SystemExit(main(["play", "--name", "Ana"]))
        """
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "needs Textual" in result.stderr
    assert "pip install 'gift-of-tulips[client]'" in result.stderr


def test_terminal_client_help_works_without_textual() -> None:
    """``tulips --help`` needs only the catalogue, not Textual or Rich."""
    result = _without_extras(
        """
        from client.tui.cli import main
        main(["--help"])
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: tulips")
