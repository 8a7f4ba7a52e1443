"""The JavaScript client in examples/js plays a whole open-box match against a
real server and verifies it, and its deal reproduces docs/deal-vectors.json.

Node and npm come from the machine: without them these tests skip, saying
so. The client's two npm packages are installed once per run with
``npm ci`` from its committed lock (under a file lock, so parallel workers
install once), and not at all when ``node_modules`` already holds the pinned
versions, so a machine offline can run them once they are installed.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, TIMEOUT, run

JS = ROOT / "examples" / "js"
VECTORS = ROOT / "docs" / "deal-vectors.json"
INSTALL_TIMEOUT = 180
#: what npm says when it cannot reach the registry (the tests skip then, not fail)
_OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET", "ENETUNREACH")
#: one retry, soon: a machine offline learns it in seconds, not npm's minute
_QUICK_RETRIES = (
    "--fetch-retries=1",
    "--fetch-retry-mintimeout=1000",
    "--fetch-retry-maxtimeout=5000",
)


def _offline(line: str) -> bool:
    """True if an npm error line says the registry could not be reached."""
    return any(code in line for code in _OFFLINE)


def _tool(name: str) -> str:
    """The path of ``name`` on PATH, or skip the test saying it is missing."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed: the JavaScript client needs Node.js 20+ and npm")
    return path


def _installed() -> bool:
    """True if node_modules holds every package of the lock, at its pinned version."""
    lock = json.loads((JS / "package-lock.json").read_text())
    for where, package in lock["packages"].items():
        if not where:  # the client itself
            continue
        manifest = JS / where / "package.json"
        if not manifest.is_file():
            return False
        if json.loads(manifest.read_text()).get("version") != package["version"]:
            return False
    return True


@pytest.fixture(scope="session")
def js_client() -> Path:
    """examples/js/client.js with its dependencies installed (``npm ci``, once)."""
    node, npm = _tool("node"), _tool("npm")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    if int(version.stdout.strip().lstrip("v").split(".")[0]) < 20:
        pytest.skip(f"Node.js {version.stdout.strip()} is too old: the client needs 20+")
    with open(JS / "package-lock.json") as lock_file:  # one installer at a time
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            if not _installed():
                done = subprocess.run(
                    [npm, "ci", "--prefix", str(JS), "--no-audit", "--no-fund", *_QUICK_RETRIES],
                    capture_output=True,
                    text=True,
                    timeout=INSTALL_TIMEOUT,
                    cwd=ROOT,
                )
                if done.returncode != 0:
                    offline = [line for line in done.stderr.splitlines() if _offline(line)]
                    if offline:
                        pytest.skip(f"npm ci cannot reach the registry: {offline[0]}")
                    pytest.fail(f"npm ci failed:\n{done.stderr}")
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)
    return JS / "client.js"


@pytest.mark.parametrize("seats", [3, 4])
async def test_js_client_plays_and_verifies_an_open_box_match(
    js_client: Path, url: str, seats: int
) -> None:
    """client.js plays a whole match against bots from the prompts, prints the
    scores, and verifies the seed commitment, the deal and the scores from the
    replay."""
    code, out, err = await run(_tool("node"), str(js_client), url, "--seats", str(seats))
    assert code == 0, out + err
    assert "NOT VERIFIED" not in err
    scores = [line for line in out.splitlines() if line.startswith("seat ")]
    assert len(scores) == seats and all(line.endswith(" points") for line in scores)
    assert "winners: [" in out
    for verified in (
        "verified seed commitment: sha256(salt ‖ seed ",
        "verified deal: starting festival ",
        "verified deal: first seat ",
        "verified deal: seat 0's own dealt cards ",
        "verified deal: the opening:",
        "verified deal: all ",
        "verified deal: the reveal ",
        "verified scores: every KEEP and GIVE scored ",
        "verified scores: the final ranking ",
        "verified scores: the final scores ",
        "published actions are the moves the events show",
    ):
        assert verified in out, f"{verified!r} missing from:\n{out}"


async def test_js_client_refuses_a_bad_command_line(js_client: Path) -> None:
    """A wrong argument is the usage line and exit 2, before any connection."""
    code, _, err = await run(_tool("node"), str(js_client), "http://x")
    assert code == 2 and "usage:" in err


def test_js_node_tests_pass(js_client: Path) -> None:
    """``node --test examples/js/``: the JavaScript deal gives every vector of
    docs/deal-vectors.json, its checks catch a tampered replay, and its
    MessagePack encoding keeps the seed exact and the ids integers."""
    done = subprocess.run(
        [_tool("node"), "--test", "examples/js/"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout
    if not VECTORS.is_file():
        pytest.skip("docs/deal-vectors.json is missing: node --test skipped the vectors")
    assert "# skipped 0" in done.stdout, done.stdout
