"""House rulesets (R30): ``tulips-server --ruleset FILE`` offers them beside
the printed rules, every client hears every number in ``welcome`` and the
snapshot, and a match plays by its own; a file that cannot be offered stops
the server before it starts, with the file and field named."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from engine import DEFAULT_RULESET, ruleset_from_mapping
from protocol.examples import HOUSE_RULESET, STANDARD_RULESET
from server.rulesets import changes, ruleset_info

from .helpers import RawClient
from .test_cli import ROOT, listening_port, start_server

SHORT = 'name = "short"\nreveal_size = 3\n[points]\nbouquet = [0, 1, 2, 3]\n'
RICH = 'name = "rich"\n[points]\ngiving_bonus = [4, 3, 2, 1]\n[removed]\n3 = 6\n'


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_printed_rules_have_no_changes_and_a_house_ruleset_names_its_own() -> None:
    """R30: ``changes`` lists exactly the fields that differ from the printed rules."""
    assert changes(DEFAULT_RULESET) == ()
    assert ruleset_info(DEFAULT_RULESET) == STANDARD_RULESET
    house = ruleset_from_mapping(
        {"name": "short reveal", "reveal_size": 3, "points": {"bouquet": [0, 1, 2, 3]}}
    )
    assert ruleset_info(house) == HOUSE_RULESET
    odd = ruleset_from_mapping({"removed": {"3": 6}, "majority_places": {"6": 2}})
    assert changes(odd) == ("removed.3", "majority_places.6")


async def test_two_rulesets_are_offered_and_a_match_plays_by_its_own(tmp_path: Path) -> None:
    """Two --ruleset files: welcome offers standard, short and rich with their
    numbers; a match of short reveals at most 3 secret cards (R19), and both
    its spectators' snapshots carry short's every number."""
    short = _write(tmp_path / "short.toml", SHORT)
    rich = _write(tmp_path / "rich.toml", RICH)
    process = await start_server(
        tmp_path / "data", "--ruleset", str(short), "--ruleset", str(rich), "--bot-delay", "0"
    )
    try:
        port = await listening_port(process)
        url = f"ws://127.0.0.1:{port}"
        ada = await RawClient.open(url, "Ada")
        assert ada.welcome is not None
        offered = {r["name"]: r for r in ada.welcome["rulesets"]}
        assert list(offered) == ["standard", "short", "rich"]
        assert offered["standard"].get("changes", []) == []
        assert offered["short"]["reveal_size"] == 3
        assert offered["short"]["changes"] == ["reveal_size", "points.bouquet"]
        assert offered["rich"]["removed"] == [18, 6, 6, 14, 10]
        assert offered["rich"]["changes"] == ["points.giving_bonus", "removed.3"]
        created = await ada.request(
            "create_match",
            name="quick",
            seats=3,
            ruleset="short",
            bots=[{"seat": s, "strength": "easy"} for s in range(3)],
        )
        assert created["type"] == "joined" and created["seat"] is None, created
        bea = await RawClient.open(url, "Bea")
        listed = await bea.request("list_matches")
        assert [m["ruleset"] for m in listed["matches"]] == ["short"]
        assert (await bea.request("watch", match=created["match"]))["type"] == "joined"
        assert (await ada.request("start"))["type"] in ("ok", "snapshot")
        for watcher in (ada, bea):
            snapshot = await watcher.next(lambda m: m["type"] == "snapshot", timeout=10)
            assert snapshot["seat"] is None
            assert snapshot["ruleset"]["name"] == "short"
            assert snapshot["ruleset"]["reveal_size"] == 3
            assert snapshot["ruleset"]["bouquet"] == [0, 1, 2, 3]
            assert snapshot["state"]["points"]["reveal_size"] == 3
        revealed = 0
        while True:
            message = await bea.next(lambda m: m["type"] == "event", timeout=30)
            kind = message["event"]["kind"]
            revealed += kind == "secret_revealed"
            if kind == "match_ended":
                break
        assert 1 <= revealed <= 3
        await ada.close()
        await bea.close()
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"a.toml": SHORT, "b.toml": SHORT},
            "b.toml: ruleset field 'name': 'short' is also the name of",
        ),
        (
            {"std.toml": 'name = "standard"\nreveal_size = 4\n'},
            "std.toml: ruleset field 'name': 'standard' is the printed rules",
        ),
        (
            {"bad.toml": 'name = "bad"\n[deck]\ncopies = 0\n'},
            "bad.toml: ruleset field 'deck.copies'",
        ),
        (
            {"typo.toml": 'name = "t"\nreveal = 3\n'},
            "typo.toml: ruleset field 'reveal': unknown key",
        ),
        ({"broken.toml": "name = \n"}, "broken.toml: not valid TOML"),
        ({}, "ruleset file not found"),
    ],
    ids=["same-name", "standard-differs", "bad-field", "unknown-key", "not-toml", "missing"],
)
async def test_a_ruleset_that_cannot_be_offered_stops_the_server(
    files: dict[str, str], message: str, tmp_path: Path
) -> None:
    """Exit code 2 and one line naming the file and the field; nothing served."""
    paths = [_write(tmp_path / name, text) for name, text in files.items()] or [
        tmp_path / "nowhere.toml"
    ]
    flags = [arg for path in paths for arg in ("--ruleset", str(path))]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--data-dir",
        str(tmp_path / "data"),
        *flags,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(15):
        out, err = await process.communicate()
    assert process.returncode == 2, err.decode()
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith("tulips-server: error: --ruleset ")
    assert message in last, last
    assert b"listening" not in err and not out
