"""The two soaks that ``tulips-loadtest`` ships — ``--hostile N`` and
``--crash-soak K`` — run with tiny numbers against a real server process, and
report every figure with its target; plus the parts they judge by: the frame
pool, the alignment of sent and stored actions, and the log scan.

The figures themselves are the commands' business (README, Benchmarks); these
tests check that the commands run, report, and pass or fail as they should.
"""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import pytest

import protocol as wire
from client.loadgen import cli as loadtest
from client.loadgen.crashsoak import Attempt, Options, align, run_crash_soak
from client.loadgen.hostile_frames import KINDS, Frame, Pool
from client.loadgen.serverlog import scan_log

# -- the frame pool ------------------------------------------------------------------------


def unmask(frame: bytes) -> list[tuple[int, bytes]]:
    """Every (opcode, payload) in a run of masked client frames."""
    out = []
    at = 0
    while at < len(frame):
        opcode, size, start = frame[at] & 0x0F, frame[at + 1] & 0x7F, at + 2
        if size == 126:
            size, start = int.from_bytes(frame[at + 2 : at + 4], "big"), at + 4
        elif size == 127:
            size, start = int.from_bytes(frame[at + 2 : at + 10], "big"), at + 10
        masked = bool(frame[at + 1] & 0x80)
        key = frame[start : start + 4] if masked else b"\0\0\0\0"
        start += 4 if masked else 0
        body = frame[start : start + size]
        mask = int.from_bytes((key * (len(body) // 4 + 1))[: len(body)], "big")
        out.append((opcode, (int.from_bytes(body, "big") ^ mask).to_bytes(len(body), "big")))
        at = start + size
    return out


@pytest.fixture(scope="module")
def pool() -> Pool:
    return Pool(random.Random(7), ["abcd1234"], size=60)


def test_pool_has_every_kind_and_draws_them(pool: Pool) -> None:
    """Every kind is built, and drawing yields each of them (bitflip on the fly)."""
    drawn = {pool.draw(random.Random(i)).kind for i in range(3000)}
    assert drawn == set(KINDS)
    assert all(pool.kinds[kind] for kind in KINDS if kind != "bitflip")


def test_pool_frames_are_well_framed_and_within_the_limit(pool: Pool) -> None:
    """Apart from the violations, every entry is masked RFC 6455 frames whose
    payloads fit MAX_FRAME_BYTES, and the frame count it declares is right."""
    for kind, frames in pool.kinds.items():
        if kind == "violation":
            assert all(f.closes and f.answers == 0 for f in frames)
            continue
        for frame in frames:
            parts = unmask(frame.data)
            assert len(parts) == frame.frames, kind
            assert all(len(payload) <= wire.MAX_FRAME_BYTES for _, payload in parts), kind
            assert frame.data[1] & 0x80, f"{kind}: clients must mask"


def test_pool_payloads_only_ever_raise_protocol_errors(pool: Pool) -> None:
    """Decoding any binary payload of the pool returns a message or raises
    ProtocolError — the protocol's promise, checked on what the soak sends;
    the ``valid`` kind decodes."""
    rng = random.Random(3)
    frames: list[Frame] = [f for k, fs in pool.kinds.items() if k != "violation" for f in fs]
    frames += [pool.draw(rng) for _ in range(500)]
    refused = 0
    for frame in frames:
        for opcode, payload in unmask(frame.data):
            if opcode != 2 or frame.frames != 1:
                continue
            try:
                message = wire.decode_client_message(payload)
            except wire.ProtocolError:
                refused += 1
                assert frame.kind != "valid", payload[:60]
            else:
                assert isinstance(message, wire.Message)
    assert refused > len(frames) // 2


def test_pool_is_the_same_for_the_same_seed() -> None:
    """A seed gives the same pool, so a failing run can be repeated."""
    one, two = (Pool(random.Random(5), ["m1"], size=20) for _ in range(2))
    assert [f.data for f in one.kinds["mutated"]] == [f.data for f in two.kinds["mutated"]]


# -- the crash soak's check ----------------------------------------------------------------


def sure(*keys: tuple[str, object]) -> list[Attempt]:
    return [Attempt(k, True) for k in keys]


KEEP, ADD = ("keep", None), ("add_face_up", None)


def test_align_every_acknowledged_action_stored() -> None:
    """Acknowledged actions all stored, in order: nothing lost or unexplained."""
    attempts = sure(("opening", "pink-3"), KEEP, ("give", 2))
    stored = [("opening", None), KEEP, ("give", 2)]
    assert align(attempts, stored) == (0, 0)


def test_align_counts_a_missing_acknowledged_action_as_lost() -> None:
    """An acknowledged action not stored is lost, even if a later one looks like it."""
    assert align(sure(KEEP, KEEP, ADD), [KEEP, ADD]) == (1, 0)
    assert align(sure(("give", 1)), [("give", 2)]) == (1, 1)


def test_align_an_unanswered_action_may_be_stored_or_not() -> None:
    """An action whose answer never came may be stored or not, at no cost."""
    attempts = [Attempt(KEEP, True), Attempt(ADD, False), Attempt(KEEP, True)]
    assert align(attempts, [KEEP, ADD, KEEP]) == (0, 0)
    assert align(attempts, [KEEP, KEEP]) == (0, 0)


def test_align_counts_a_stored_action_no_one_sent_as_unexplained() -> None:
    """A stored action that no attempt explains is unexplained."""
    assert align(sure(KEEP), [KEEP, ADD]) == (0, 1)


# -- the log scan --------------------------------------------------------------------------


def test_scan_log_counts_tracebacks_once_with_their_last_exception(tmp_path: Path) -> None:
    """A chained traceback is one traceback, named by its final exception."""
    log = tmp_path / "server.log"
    log.write_text(
        "2026-01-01 10:00:00 WARNING server: a slow client\n"
        "2026-01-01 10:00:01 ERROR server: connection <Peer x> failed\n"
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in f\n'
        "KeyError: 'x'\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "a.py", line 2, in g\n'
        "RuntimeError: boom\n"
    )
    scan = scan_log(log)
    assert scan.tracebacks == 1
    assert scan.exceptions == {"RuntimeError: boom": 1}
    assert (scan.errors, scan.warnings) == (1, 1)
    assert "failed" in scan.contexts["RuntimeError: boom"]


# -- the commands, small, against a real server process --------------------------------------


def missed_targets(out: str) -> list[str]:
    """The target lines of a hostile soak's report that are missed, but for the
    memory figure: a benchmark's number, quoted from the command's own runs
    (README, Benchmarks), not something a test on a shared machine can judge."""
    targets = out.split("targets\n", 1)[1].splitlines()
    assert len(targets) == 6, out
    return [line for line in targets if "[ok" not in line and "memory after" not in line]


def test_hostile_soak_small_passes(capsys: pytest.CaptureFixture[str]) -> None:
    """``tulips-loadtest --hostile 2000`` beside two normal matches: every target
    line printed, every one met but for the memory figure (a benchmark's)."""
    code = loadtest.main(
        [
            *("--hostile", "2000", "--matches", "2", "--connections", "6", "--nonreaders", "1"),
            *("--think", "0.01", "--settle", "0.5", "--duration", "60"),
        ]
    )
    out = capsys.readouterr().out
    for figure in ("hostile frames", "server memory", "normal matches", "server log"):
        assert figure in out
    assert not missed_targets(out), out
    assert code in (0, 1)  # 1 only if the memory figure missed


def test_crash_soak_small_passes(capsys: pytest.CaptureFixture[str]) -> None:
    """``tulips-loadtest --crash-soak 2``: kills done, actions acknowledged and
    none lost, exit code 0."""
    code = loadtest.main(["--crash-soak", "2", "--tables", "2", "--life", "0.3", "0.8"])
    out = capsys.readouterr().out
    assert "kills               2 in" in out
    acknowledged = int(out.split("actions ", 1)[1].split()[0].replace(",", ""))
    assert acknowledged > 0
    assert code == 0, out


def test_crash_soak_finds_losses_when_nothing_is_stored(tmp_path: Path) -> None:
    """Against a server that stores nothing, every acknowledged action is lost,
    the tokens are refused, and the soak fails: its check can fail."""
    options = Options(kills=1, tables=1, life=(0.5, 0.5), storage=("--no-storage",))
    report = asyncio.run(run_crash_soak(options, tmp_path, tmp_path / "server.log"))
    assert report.acknowledged > 0
    assert report.lost == report.acknowledged
    assert report.tokens_refused == 4
    assert not report.passed


@pytest.mark.parametrize("mode", ["--hostile", "--crash-soak"])
def test_soak_help_is_plain_text(mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Each soak's --help reads as plain text and names its own flags."""
    with pytest.raises(SystemExit) as exited:
        loadtest.main([mode, "1", "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: tulips-loadtest {mode}")
    assert re.search(r"`|:[a-z]+:|\*\*", text) is None
    assert "--duration" in text


@pytest.mark.slow
@pytest.mark.soak
def test_hostile_soak_bigger(capsys: pytest.CaptureFixture[str]) -> None:
    """The hostile soak with bigger numbers (40 s of it)."""
    loadtest.main(["--hostile", "40000", "--matches", "4", "--duration", "40"])
    out = capsys.readouterr().out
    assert not missed_targets(out), out


@pytest.mark.slow
@pytest.mark.soak
def test_crash_soak_bigger(capsys: pytest.CaptureFixture[str]) -> None:
    """The crash soak with bigger numbers: ten kills across three tables."""
    assert loadtest.main(["--crash-soak", "10", "--tables", "3"]) == 0, capsys.readouterr().out
