"""A real server process is killed with SIGKILL in the middle of a 4-seat match
and restarted on the same data directory; the same clients come back with
their tokens and finish the match. Then everything anyone was told must agree
with the engine's replay of the finished match's seed and actions:

* every action a client saw carried out (``ok``, or its event) is in the final
  action list, at its place, and none is missing or extra;
* the events each client saw before the crash are exactly the replay's events
  (as its seat sees them) with those numbers, and so are the later ones;
* whatever was on disk when the process died is a prefix of the final list —
  in particular the action written but not yet told to anyone when the server
  killed itself after its Nth commit (``python -m tests.storage.killable_server
  --kill-after-commits N``);
* every snapshot, the final scoring and the public replay are the replay's.

Kill points: the Nth storage commit for several N, and random moments chosen
by the test. The default run covers a few of each; ``-m slow`` sweeps many.
"""

from __future__ import annotations

import asyncio
import random
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import protocol as wire
from client.sdk import Session

from .helpers import (
    ACTIONS_IN_A_4_SEAT_MATCH,
    Replayed,
    Seen,
    ServerProcess,
    Servers,
    check_client,
    fetch_replay,
    known_actions,
    open_session,
    play,
    read_disk,
    replay_of,
    wait_until_people_must_act,
)

SEATS = 4
NAMES = ("Ana", "Bea", "Cem", "Dan")


@dataclass(frozen=True)
class Kill:
    """How the server dies once: by itself after its Nth storage commit, or
    by the test's SIGKILL once some client has seen ``events`` more events
    (then after a random pause of up to ``jitter`` seconds). With ``term``,
    the test's signal is SIGTERM instead: a clean stop that must end, with
    exit code 0, within ``term`` seconds."""

    after_commits: int | None = None
    events: int | None = None
    jitter: float = 0.005
    term: float | None = None

    def __post_init__(self) -> None:
        assert (self.after_commits is None) != (self.events is None)


@dataclass
class Outcome:
    """What happened, for the assertions and for a failure's message."""

    replayed: Replayed
    seens: list[Seen]
    #: the actions on disk right after each kill
    on_disk: list[list[tuple[int, dict[str, object]]]] = field(default_factory=list)
    #: how many actions some client knew of at each kill
    known: list[int] = field(default_factory=list)


def setup_writes(humans: int) -> int:
    """Storage writes before the first action can be written: each new player's
    hello, create_match (two), each join, and start (the seed, then the deal)."""
    return humans + 2 + (humans - 1) + 2


def human_seats(humans: int) -> list[int]:
    """Which seats people hold (the others are bots)."""
    return [0, 2] if humans == 2 else list(range(humans))


async def seat_everyone(url: str, humans: int) -> tuple[str, list[Session], list[Seen]]:
    """The first client creates a 4-seat match (bots in the other seats), the
    others take their seats, and the host starts it."""
    seats = human_seats(humans)
    strengths = ("easy", "medium")  # quick bots: a hard one thinks for hundreds of ms
    bots = [(seat, strengths[seat // 2 % 2]) for seat in range(SEATS) if seat not in seats]
    sessions: list[Session] = []
    seens: list[Seen] = []
    async with asyncio.timeout(20):
        for number, seat in enumerate(seats):
            session = await open_session(url, NAMES[number])
            sessions.append(session)
            if number == 0:
                joined = await session.create_match(
                    name="crash test", seats=SEATS, bots=bots, open_box=True
                )
                match_id = joined.match
            else:
                joined = await session.join(match_id, seat=seat)
            assert joined.seat == seat
            assert session.player_id is not None and session.token is not None
            seens.append(Seen(NAMES[number], seat, session.player_id, session.token))
        await sessions[0].start()
    return match_id, sessions, seens


async def resume(server: ServerProcess, seen: Seen) -> Session:
    """``seen``'s client back after a restart: hello with its token, then the
    server puts it back in its seat (PROTOCOL.md: welcome, then joined, snapshot)."""
    session = await open_session(server.url, seen.name, token=seen.token)
    assert session.player_id == seen.player_id, "the token resumed another player"
    try:
        joined = await session.next_of(wire.Joined, timeout=5)
    except TimeoutError:
        raise AssertionError(
            f"after the restart, {seen.name} (seat {seen.seat}, last saw event"
            f" {seen.last_seq}) was not put back in the match"
        ) from None
    assert joined.seat == seen.seat
    return session


async def close_all(sessions: list[Session]) -> None:
    """Close client sessions (their server may be gone)."""
    async with asyncio.timeout(10):
        await asyncio.gather(*(session.close() for session in sessions), return_exceptions=True)


async def play_until(
    server: ServerProcess,
    sessions: list[Session],
    seens: list[Seen],
    rng: random.Random,
    kill: Kill | None,
) -> list[str]:
    """Every client plays on its connection until the match ends or the server
    dies (``kill`` says how); each client's result, ``"over"`` or ``"lost"``."""
    progressed = asyncio.Event()
    counts = [0] * len(seens)

    def counter(number: int) -> Callable[[int], None]:
        def seen_event(seq: int) -> None:
            counts[number] += 1
            if kill is not None and kill.events is not None and counts[number] >= kill.events:
                progressed.set()

        return seen_event

    tasks = [
        asyncio.create_task(
            play(
                session,
                seen,
                random.Random(rng.random()),
                think=0.002,
                on_event=counter(number),
            )
        )
        for number, (session, seen) in enumerate(zip(sessions, seens, strict=True))
    ]
    everyone = asyncio.gather(*tasks)
    try:
        async with asyncio.timeout(60):
            if kill is not None:
                trigger: asyncio.Future[Any] = asyncio.ensure_future(
                    server.process.wait() if kill.after_commits is not None else progressed.wait()
                )
                await asyncio.wait([trigger, everyone], return_when=asyncio.FIRST_COMPLETED)
                trigger.cancel()
                if everyone.done():
                    everyone.result()  # a client's failed check, raised here
                if kill.after_commits is not None:
                    code = await server.wait_exit(10)
                    assert code == -signal.SIGKILL, f"exit code {code}:\n{server.log()}"
                else:
                    await asyncio.sleep(rng.uniform(0, kill.jitter))
                    if kill.term is not None:
                        code = await server.stop(timeout=kill.term)
                        assert code == 0, f"exit code {code}:\n{server.log()}"
                    else:
                        await server.kill()
            return list(await everyone)
    except TimeoutError:
        state = "\n".join(
            f"{seen.name} seat {seen.seat}: last seq {seen.last_seq}, sent {seen.sent[-3:]},"
            f" done {task.done()}"
            for seen, task in zip(seens, tasks, strict=True)
        )
        raise AssertionError(f"the match got stuck:\n{state}\n{server.log()[-3000:]}") from None
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(everyone, return_exceptions=True)


async def crash_and_finish(
    servers: Servers,
    data_dir: Path,
    kills: list[Kill],
    *,
    humans: int = 2,
    seed: int = 0,
    sync: str = "full",
    flags: tuple[str, ...] = (),
    slow_disk: tuple[float, int] | None = None,
) -> Outcome:
    """Play a 4-seat match through every kill and restart, to the end; check
    everything against the replay, and return what happened. ``flags`` go to
    every server; with ``slow_disk`` = (seconds, N), the first server's
    commits take that long from its Nth on."""
    rng = random.Random(seed)
    flags = ("--sync", sync, *flags)
    delay, slow_from = slow_disk if slow_disk is not None else (None, 1)
    server = await servers.start(
        data_dir,
        *flags,
        kill_after_commits=kills[0].after_commits,
        commit_delay=delay,
        slow_from_commit=slow_from,
    )
    match_id, sessions, seens = await seat_everyone(server.url, humans)
    playing = list(seens)
    disks: list[list[tuple[int, dict[str, object]]]] = []
    for number, kill in enumerate(kills):
        assert kill.after_commits is None or number == 0, "only the first kill counts commits"
        results = await play_until(server, sessions, playing, rng, kill)
        await close_all(sessions)
        assert not server.running
        assert "Traceback" not in server.log(), server.log()
        disks.append(read_disk(data_dir).actions.get(match_id, []))
        server = await servers.start(data_dir, *flags, port=server.port)
        # Who saw the end is done; the others come back with their tokens: the
        # same player, put back in the same seat (joined, then a snapshot). They
        # come back once the bots wait for a person, all before anyone acts:
        # a snapshot taken while an action is being written shows it too early
        # (test_pause.py::test_nobody_sees_an_action_while_it_is_being_written).
        await wait_until_people_must_act(data_dir, match_id, human_seats(humans), SEATS)
        playing = [seen for seen, result in zip(playing, results, strict=True) if result != "over"]
        sessions = [await resume(server, seen) for seen in playing]
    results = await play_until(server, sessions, playing, rng, None)
    assert results == ["over"] * len(playing), results

    finals = []
    for session, seen in zip(sessions, playing, strict=True):
        async with asyncio.timeout(10):
            finals.append((seen, await session.sync()))
    await close_all(sessions)
    checker = await open_session(server.url, seens[0].name, token=seens[0].token)
    pages, public = await fetch_replay(checker, match_id)
    listed = {summary.match: summary for summary in await checker.list_matches()}
    await close_all([checker])
    assert listed[match_id].status == "finished"
    replayed = replay_of(pages, SEATS)
    assert replayed.match.is_over
    assert len(replayed.actions) == ACTIONS_IN_A_4_SEAT_MATCH
    # the checker held a seat: its replay is that seat's view (R27)
    assert all(page.seat == seens[0].seat for page in pages)
    assert public == replayed.wire_events(seens[0].seat), "the replay's events are not the engine's"
    positions = {seen.name: check_client(replayed, seen) for seen in seens}
    for seen, final in finals:
        assert final.state.phase == "over"
        assert final.state == replayed.state_at(len(replayed.events), seen.seat)

    outcome = Outcome(replayed, seens)
    stored = replayed.data()
    for number, disk in enumerate(disks):
        known = known_actions(replayed, seens, positions, upto=number + 1)
        outcome.on_disk.append(disk)
        outcome.known.append(known)
        assert disk == stored[: len(disk)], f"what was on disk at kill {number + 1} was changed"
        assert known <= len(disk), (
            f"kill {number + 1}: clients knew of {known} actions, only {len(disk)} were on disk"
        )

    assert await server.stop() == 0, server.log()
    after = read_disk(data_dir)
    assert after.actions[match_id] == stored, "the stored actions are not the replayed ones"
    assert after.matches[match_id]["seed"] == replayed.seed
    return outcome


async def check_kill_after_commits(
    servers: Servers, data_dir: Path, commits: int, *, humans: int = 2, sync: str = "full"
) -> Outcome:
    """The server kills itself right after its Nth commit. From commit
    ``setup_writes + 1`` on, every commit holds an action (actions are written
    one at a time, and nothing else is written while the match runs), so the
    last action on disk was never told to anyone: nobody saw it carried out,
    yet it must survive the restart."""
    outcome = await crash_and_finish(
        servers, data_dir, [Kill(after_commits=commits)], humans=humans, seed=commits, sync=sync
    )
    on_disk, known = len(outcome.on_disk[0]), outcome.known[0]
    if setup_writes(humans) < commits <= ACTIONS_IN_A_4_SEAT_MATCH:
        assert commits - setup_writes(humans) <= on_disk < commits, (on_disk, commits)
        assert known < on_disk, (
            f"after commit {commits}: {on_disk} actions on disk, but clients already knew of"
            f" {known}: the last one was told before the server died, or was not written"
        )
    return outcome


# -- the default run: a few kill points of each kind --------------------------------------------


@pytest.mark.parametrize("commits", [8, 9, 11, 16, 27, 41, 60])
async def test_kill_after_nth_commit(servers: Servers, tmp_path: Path, commits: int) -> None:
    """SIGKILL right after the Nth commit (an action written, nobody told):
    the action survives, the match finishes, and everything agrees with its replay."""
    await check_kill_after_commits(servers, tmp_path / "data", commits)


@pytest.mark.parametrize("commits", [12, 33])
async def test_kill_after_nth_commit_four_clients(
    servers: Servers, tmp_path: Path, commits: int
) -> None:
    """The same with four SDK clients and no bots (the openings come in at once)."""
    await check_kill_after_commits(servers, tmp_path / "data", commits, humans=4)


async def test_kill_after_nth_commit_sync_normal(servers: Servers, tmp_path: Path) -> None:
    """``--sync normal`` loses nothing to a process crash either."""
    await check_kill_after_commits(servers, tmp_path / "data", 23, sync="normal")


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_kill_at_a_random_moment(servers: Servers, tmp_path: Path, seed: int) -> None:
    """SIGKILL from outside at a random moment of the match; whatever was
    acknowledged or shown survives, an unanswered act is lost or kept whole."""
    rng = random.Random(seed)
    await crash_and_finish(
        servers, tmp_path / "data", [Kill(events=rng.randrange(1, 120))], seed=seed
    )


async def test_two_kills_at_random_moments(servers: Servers, tmp_path: Path) -> None:
    """A restored match keeps being stored correctly: it survives a second crash."""
    rng = random.Random(7)
    kills = [Kill(after_commits=rng.randrange(9, 50)), Kill(events=rng.randrange(5, 40))]
    await crash_and_finish(servers, tmp_path / "data", kills, seed=7)


@pytest.mark.parametrize(("delay", "events"), [(0.3, 30), (3.0, 1)], ids=["slow", "very-slow"])
async def test_sigterm_on_a_slow_disk_stops_promptly_and_loses_nothing(
    servers: Servers, tmp_path: Path, delay: float, events: int
) -> None:
    """SIGTERM while the match is played on a slow disk (each commit takes 0.3
    or 3 s once the match has started, as on a FUSE file system): the server
    takes no more actions and exits with 0 within its ``--stop-timeout`` of 2 s
    and a margin — not after every queued write, however slow — and after a
    restart everything acknowledged or shown is there, and the match finishes."""
    await crash_and_finish(
        servers,
        tmp_path / "data",
        [Kill(events=events, term=2 + 6)],
        seed=int(delay * 10),
        flags=("--stop-timeout", "2"),
        slow_disk=(delay, setup_writes(2) + 1),
    )


# -- the sweep ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("commits", range(1 + setup_writes(2), ACTIONS_IN_A_4_SEAT_MATCH + 1, 2))
async def test_sweep_kill_after_nth_commit(servers: Servers, tmp_path: Path, commits: int) -> None:
    """Every other commit of a whole match."""
    await check_kill_after_commits(servers, tmp_path / "data", commits)


@pytest.mark.slow
@pytest.mark.parametrize("commits", range(1 + setup_writes(4), ACTIONS_IN_A_4_SEAT_MATCH + 1, 4))
async def test_sweep_kill_after_nth_commit_four_clients(
    servers: Servers, tmp_path: Path, commits: int
) -> None:
    """Four SDK clients, a commit every four."""
    await check_kill_after_commits(servers, tmp_path / "data", commits, humans=4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 112))
async def test_sweep_random_moments(servers: Servers, tmp_path: Path, seed: int) -> None:
    """Two or three crashes at random moments, with either sync setting."""
    rng = random.Random(seed)
    count = rng.choice((2, 3))  # all before the end: ~150 events in all
    kills = [Kill(events=rng.randrange(1, 130 // count)) for _ in range(count)]
    sync = rng.choice(("full", "normal"))
    humans = rng.choice((2, 4))
    await crash_and_finish(servers, tmp_path / "data", kills, seed=seed, humans=humans, sync=sync)
