"""tulips-loadtest crash-soak K: kill the server K times, lose nothing.

It starts a server (python -m server) on 127.0.0.1 with storage on (sync
full) in a data directory, and --tables matches of four SDK players play
from their prompts. At a random moment it kills the server with SIGKILL,
starts it again on the same directory, and every player comes back with its
resume token. Before anyone acts again, each table asks for the replay of
every match it has played in since the last check and checks, seat by seat,
that every action the server answered "ok" to is there, in the order it was
played, and that no event anyone was sent is missing. Then play goes on,
until the next kill.

An action whose answer never came (the server died first) may be stored or
not; either is right. A stored action that no player sent is "unexplained"
(the server plays for a seat only after a grace period, set far beyond a
restart here). The report: kills done, actions acknowledged, actions lost
(target 0), events lost, matches played, and time. The exit code is 1 on any
loss, unexplained action, refused resume token or failed restart. Bounded by
--duration; talks to 127.0.0.1 only.

    tulips-loadtest crash-soak 100
    tulips-loadtest crash-soak 5 --tables 2
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from websockets.exceptions import ConnectionClosed

import protocol as wire

from ..localserver import LocalServer
from ..sdk import ConnectError, ConnectionLost, RequestError, Session
from .report import target_lines
from .serverlog import LogScan, keep_log, scan_log

__all__ = ["CrashReport", "Options", "add_arguments", "align", "run_command", "run_crash_soak"]

SEATS = 4
#: an action as the check compares it: its kind, and the card or seat it names
#: (None where the public record does not say: an opening's secret card)
Key = tuple[str, object]


@dataclass
class Options:
    """What one crash soak does."""

    kills: int = 100
    tables: int = 6
    think: float = 0.01  #: a player's mean pause before acting, seconds
    #: seconds of play between the players' return and the next kill (uniform)
    life: tuple[float, float] = (0.3, 2.5)
    duration: float = 1800.0
    seed: int = 1
    #: how the server stores matches (a test passes ``--no-storage`` to see losses found)
    storage: tuple[str, ...] = ("--sync", "full")


@dataclass
class CrashReport:
    """What a crash soak measured."""

    target_kills: int = 0
    kills: int = 0
    restarts_failed: int = 0
    acknowledged: int = 0
    lost: int = 0
    unexplained: int = 0
    events_lost: int = 0
    #: matches a check could not find after a restart (their actions count as lost)
    missing_matches: int = 0
    #: players the server did not put back in their match after a restart
    not_put_back: int = 0
    #: resume tokens the server no longer knew after a restart
    tokens_refused: int = 0
    checks: int = 0
    matches_started: int = 0  #: created (a kill may come before their start)
    matches_finished: int = 0  #: seen finished in their record
    matches_unstarted: int = 0  #: still open after a restart: killed between create and start
    details: list[str] = field(default_factory=list)
    #: requests the server refused (other than acts): code and count
    refusals: collections.Counter[str] = field(default_factory=collections.Counter)
    elapsed: float = 0.0
    shutdown: int | None = None
    log: LogScan = field(default_factory=LogScan)
    log_path: str = ""

    def note(self, text: str) -> None:
        """Keep the first few losses' details for the report."""
        if len(self.details) < 10:
            self.details.append(text)

    def targets(self) -> list[tuple[str, bool, str]]:
        """``(target, met, figure)`` for each target."""
        return [
            (f"kills done: {self.target_kills}", self.kills >= self.target_kills, str(self.kills)),
            ("restarts that failed: 0", self.restarts_failed == 0, str(self.restarts_failed)),
            ("acknowledged actions lost: 0", self.lost == 0, str(self.lost)),
            ("events sent to a player, lost: 0", self.events_lost == 0, str(self.events_lost)),
            ("actions no player sent: 0", self.unexplained == 0, str(self.unexplained)),
            ("resume tokens refused: 0", self.tokens_refused == 0, str(self.tokens_refused)),
        ]

    @property
    def passed(self) -> bool:
        """Every target met."""
        return all(met for _, met, _ in self.targets())

    def lines(self) -> list[str]:
        """The report, a line per figure, then the targets."""
        out = [
            f"kills               {self.kills} in {self.elapsed:.1f} s"
            f" ({self.elapsed / max(1, self.kills):.1f} s per kill and restart)",
            f"actions             {self.acknowledged:,} acknowledged, {self.lost} lost,"
            f" {self.unexplained} unexplained",
            f"events              {self.events_lost} sent to a player and then lost",
            f"checks              {self.checks} match records checked after restarts;"
            f" {self.missing_matches} matches missing",
            f"players             {self.not_put_back} times not put back in their match"
            f" on their return; {self.tokens_refused} resume tokens refused",
            f"matches             {self.matches_started} created: {self.matches_finished}"
            f" finished, {self.matches_unstarted} killed before their start,"
            f" {self.matches_started - self.matches_finished - self.matches_unstarted}"
            " in play at the end",
            f"requests refused    {dict(self.refusals) or 'none'}",
            f"server log          {self.log.tracebacks} tracebacks, {self.log.errors} ERROR lines"
            f" ({self.log_path}); last stop exit code {self.shutdown}",
            *self.log.lines(),
        ]
        out += [f"  lost: {detail}" for detail in self.details]
        return out + target_lines(self.targets())


# -- the check --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attempt:
    """An action a player sent: ``sure`` once the server said ``ok`` (or once a
    restored record showed it); otherwise its answer never came."""

    key: Key
    sure: bool


def _same(sent: Key, stored: Key) -> bool:
    return sent[0] == stored[0] and (sent[1] == stored[1] or None in (sent[1], stored[1]))


def align(attempts: Sequence[Attempt], stored: Sequence[Key]) -> tuple[int, int]:
    """Line a seat's attempts up with its stored actions, in order.

    Returns ``(lost, unexplained)`` for the best alignment: sure attempts that
    are not stored, and stored actions that no attempt explains. An attempt
    that is not sure may be stored or not, at no cost.
    """
    n, m = len(attempts), len(stored)
    inf = (n + m + 1, 0)
    # cost[i][j]: (lost + unexplained, lost) for attempts[i:] against stored[j:]
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    cost[n][m] = (0, 0)
    for j in range(m - 1, -1, -1):
        cost[n][j] = (m - j, 0)
    for i in range(n - 1, -1, -1):
        miss = 1 if attempts[i].sure else 0
        cost[i][m] = (cost[i + 1][m][0] + miss, cost[i + 1][m][1] + miss)
        for j in range(m - 1, -1, -1):
            skip = cost[i + 1][j]
            best = (skip[0] + miss, skip[1] + miss)
            extra = cost[i][j + 1]
            best = min(best, (extra[0] + 1, extra[1]))
            if _same(attempts[i].key, stored[j]):
                best = min(best, cost[i + 1][j + 1])
            cost[i][j] = best
    total, lost = cost[0][0]
    return lost, total - lost


def action_key(action: wire.Action) -> Key:
    """How an action a player sent is compared with the stored record."""
    if isinstance(action, wire.Give):
        return ("give", action.to_seat)
    if isinstance(action, wire.Opening):
        return ("opening", action.secret)
    return (str(type(action).__struct_config__.tag), None)


def stored_actions(page_events: Sequence[wire.GameEvent]) -> list[list[Key]]:
    """Each seat's actions as the public events record them."""
    seats: list[list[Key]] = [[] for _ in range(6)]
    for event in page_events:
        if isinstance(event, wire.OpeningChosen):
            seats[event.seat].append(("opening", event.secret))
        elif isinstance(event, wire.CardKept):
            seats[event.seat].append(("keep", None))
        elif isinstance(event, wire.CardGiven):
            seats[event.seat].append(("give", event.to_seat))
        elif isinstance(event, wire.CardAddedFaceUp):
            seats[event.seat].append(("add_face_up", None))
        elif isinstance(event, wire.CardAddedSecret):
            seats[event.seat].append(("add_secret", None))
    return seats


@dataclass
class _Record:
    """What a match's stored record holds, as ``replay`` pages tell it."""

    status: str
    events: int
    seats: list[list[Key]]


async def fetch_record(session: Session, match: str) -> _Record | None:
    """Every ``replay`` page of a match; None if the server does not know it."""
    events: list[wire.GameEvent] = []
    from_seq = 1
    actions: tuple[wire.SeatAction, ...] = ()
    status = "?"
    for _ in range(50):
        try:
            page = await session.request(wire.Replay, match=match, from_seq=from_seq)
        except RequestError as exc:
            if exc.code == wire.ErrorCode.NO_SUCH_MATCH:
                return None
            raise
        assert isinstance(page, wire.ReplayPage)
        events += page.events
        status, actions = page.status, page.actions or actions
        if page.next_seq is None:
            break
        from_seq = page.next_seq
    seats = stored_actions(events)
    if actions:  # a finished match's record has every action, with the cards
        seats = [[] for _ in range(6)]
        for entry in actions:
            seats[entry.seat].append(action_key(entry.action))
    return _Record(status, len(events), seats)


# -- tables -------------------------------------------------------------------------------------


@dataclass
class _Match:
    """One match a table plays in: each seat's attempts, and the last event anyone saw."""

    attempts: list[list[Attempt]] = field(default_factory=lambda: [[] for _ in range(SEATS)])
    seen: int = 0


class _Table:
    """Four players, who come back after every restart with their tokens."""

    def __init__(self, index: int, options: Options, report: CrashReport) -> None:
        self.index = index
        self.options = options
        self.report = report
        self.rng = random.Random(options.seed * 101 + index)
        self.tokens: list[str | None] = [None] * SEATS
        self.current: str | None = None
        self.matches: dict[str, _Match] = {}  #: the matches still to be checked

    async def life(self, url: str, playing: asyncio.Event, verify_only: bool = False) -> None:
        """One server process: come back, check, then play until the server dies."""
        sessions: list[Session] = []
        try:
            resumed = []
            for seat in range(SEATS):
                session = await self._come_back(url, seat)
                sessions.append(session)
                if session.token == self.tokens[seat]:
                    resumed.append(session)
                self.tokens[seat] = session.token
            if self.current is not None:
                await self._put_back(resumed)
            status = await self._check(sessions[0])
            playing.set()
            if verify_only:
                return
            while True:
                if status != "running":
                    await self._deal(sessions)
                status = "finished" if await self._play(sessions) else "lost"
                if status == "lost":
                    return
        except RequestError as exc:  # not the server dying: worth a line in the report
            self.report.refusals[exc.code] += 1
        except (ConnectError, ConnectionError, ConnectionClosed, TimeoutError):
            return  # the server died under us: the next life takes over
        finally:
            playing.set()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(10):
                    await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)

    async def _come_back(self, url: str, seat: int) -> Session:
        """The seat's player says hello with its token; a fresh identity if the
        server no longer knows the token (counted: an identity lost)."""
        name = f"t{self.index}s{seat}"
        session = Session(url, name, token=self.tokens[seat], reconnect=False, request_timeout=15)
        try:
            await session.open()
        except ConnectError as exc:
            if exc.code != wire.ErrorCode.BAD_TOKEN:
                raise
            self.report.tokens_refused += 1
            session = Session(url, name, reconnect=False, request_timeout=15)
            await session.open()
        return session

    async def _put_back(self, sessions: list[Session]) -> None:
        """After hello, a player with a seat hears ``joined`` for it (PROTOCOL.md)."""
        for session in sessions:
            try:
                await session.next_of(wire.Joined, timeout=5)
            except TimeoutError:
                self.report.not_put_back += 1

    async def _check(self, host: Session) -> str:
        """Check every match played since the last check; the current match's status."""
        report = self.report
        status = "none"
        for match_id, match in list(self.matches.items()):
            record = await fetch_record(host, match_id)
            report.checks += 1
            if record is None:
                sure = sum(a.sure for seat in match.attempts for a in seat)
                report.missing_matches += 1
                report.lost += sure
                report.events_lost += match.seen
                report.note(f"match {match_id} is gone after the restart ({sure} actions)")
                del self.matches[match_id]
                continue
            for seat in range(SEATS):
                lost, unexplained = align(match.attempts[seat], record.seats[seat])
                if lost or unexplained:
                    report.note(
                        f"match {match_id} seat {seat}: {lost} lost, {unexplained} unexplained;"
                        f" sent {[a.key for a in match.attempts[seat]]},"
                        f" stored {record.seats[seat]}"
                    )
                report.lost += lost
                report.unexplained += unexplained
                # what is stored now must still be there after the next restart
                match.attempts[seat] = [Attempt(key, True) for key in record.seats[seat]]
            if match.seen > record.events:
                report.events_lost += match.seen - record.events
                report.note(
                    f"match {match_id}: a player saw event {match.seen},"
                    f" the record has {record.events}"
                )
            if match_id == self.current:
                status = record.status
            if record.status == "finished":
                report.matches_finished += 1
                del self.matches[match_id]
            elif record.status == "open":  # the kill came between create and start
                report.matches_unstarted += 1
                del self.matches[match_id]
        return status

    async def _deal(self, sessions: list[Session]) -> None:
        """A new match: the first player hosts, the others join, the host starts."""
        joined = await sessions[0].create_match(name=f"crash {self.index}", seats=SEATS)
        self.current = joined.match
        self.matches[joined.match] = _Match()
        self.report.matches_started += 1
        for session in sessions[1:]:
            await session.join(joined.match)
        await sessions[0].start()

    async def _play(self, sessions: list[Session]) -> bool:
        """Every seat plays its prompts; True once the match ended for all."""
        results = await asyncio.gather(
            *(self._seat(seat, session) for seat, session in enumerate(sessions))
        )
        return all(results)  # counted as finished once a check reads its record

    async def _seat(self, seat: int, session: Session) -> bool:
        match_id = self.current
        assert match_id is not None
        match = self.matches.get(match_id) or self.matches.setdefault(match_id, _Match())
        async for message in session:
            if isinstance(message, (wire.Event, wire.Snapshot)) and message.match == match_id:
                match.seen = max(match.seen, message.seq)
                if isinstance(message, wire.Event) and isinstance(message.event, wire.MatchEnded):
                    return True
            elif isinstance(message, wire.Prompt) and message.match == match_id:
                if self.options.think:
                    await asyncio.sleep(self.options.think * self.rng.uniform(0.2, 1.8))
                action = self.rng.choice(message.actions)
                attempts = match.attempts[seat]
                attempts.append(Attempt(action_key(action), False))
                try:
                    await session.answer(message, action)
                except RequestError:
                    attempts.pop()  # refused: the match is unchanged
                    continue
                except (ConnectionError, ConnectionClosed, TimeoutError):
                    return False  # no answer: it may be stored or not
                attempts[-1] = Attempt(action_key(action), True)
                self.report.acknowledged += 1
            elif isinstance(message, ConnectionLost):
                return False
        return False


async def run_crash_soak(options: Options, data_dir: Path, log_path: Path) -> CrashReport:
    """Kill and restart a server ``options.kills`` times; the report."""
    report = CrashReport(target_kills=options.kills, log_path=str(log_path))
    server = LocalServer(
        [*options.storage, "--grace-period", "3600", "--max-matches", "100000"],
        data_dir=data_dir,
        bot_delay=None,
        follow_parent=False,
        log_path=log_path,
    )
    rng = random.Random(options.seed)
    tables = [_Table(i, options, report) for i in range(options.tables)]
    started = time.monotonic()
    deadline = started + options.duration
    try:
        while report.kills < options.kills and time.monotonic() < deadline:
            if not await _one_life(server, tables, report, rng, kill=True):
                break
        if report.restarts_failed == 0:
            await _one_life(server, tables, report, rng, kill=False)  # the last check
    finally:
        report.elapsed = time.monotonic() - started
        report.shutdown = server.stop(15.0)
        report.log = scan_log(log_path)
    return report


async def _one_life(
    server: LocalServer, tables: list[_Table], report: CrashReport, rng: random.Random, kill: bool
) -> bool:
    """Start the server, let every table come back and play, then kill it (or, for
    the last check, stop it cleanly). False if the server would not start."""
    server.spawn()
    if not await server.wait_until_up():
        report.restarts_failed += 1
        report.note(f"the server did not come back up (exit code {server.exit_code()})")
        server.kill()
        return False
    playing = [asyncio.Event() for _ in tables]
    lives = [
        asyncio.create_task(table.life(server.url, ready, verify_only=not kill))
        for table, ready in zip(tables, playing, strict=True)
    ]
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(30):
            await asyncio.gather(*(ready.wait() for ready in playing))
    if kill:
        low, high = tables[0].options.life
        await asyncio.sleep(rng.uniform(low, high))
        server.kill()
        report.kills += 1
    _, late = await asyncio.wait(lives, timeout=30)
    for task in late:
        task.cancel()
    await asyncio.gather(*lives, return_exceptions=True)
    if not kill:
        server.stop(15.0)
    return True


def add_arguments(parser: argparse.ArgumentParser, *, legacy: bool = False) -> None:
    """The flags of ``tulips-loadtest crash-soak K`` (``legacy``: of its deprecated
    alias ``tulips-loadtest --crash-soak K``)."""
    defaults = Options()
    size_help = "times to SIGKILL and restart the server; 100 for the real figure"
    if legacy:
        parser.add_argument(
            "--crash-soak", dest="kills", type=int, required=True, metavar="K", help=size_help
        )
    else:
        parser.add_argument("kills", type=int, metavar="K", help=size_help)
    parser.add_argument(
        "--tables",
        type=int,
        default=defaults.tables,
        help="matches of four SDK players at once (default %(default)s)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=defaults.think,
        help="a player's mean pause before acting, s (default %(default)s)",
    )
    parser.add_argument(
        "--life",
        type=float,
        nargs=2,
        default=defaults.life,
        metavar=("MIN", "MAX"),
        help="seconds of play before each kill, drawn between MIN and MAX (default 0.3 2.5)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=defaults.duration,
        help="seconds the soak may take at most (default %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--data-dir", type=Path, help="keep the data here (default: a temp dir)")
    parser.add_argument("--keep-log", type=Path, help="copy the server's log here")


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``tulips-loadtest crash-soak K``: run, print the report, exit 1 on a loss."""
    low, high = args.life
    if args.kills < 1 or args.tables < 1 or args.duration <= 0:
        parser.error("K (kills) and --tables must be at least 1, --duration positive")
    if not 0 <= low <= high or args.think < 0:
        parser.error("--life needs 0 <= MIN <= MAX; --think must not be negative")
    options = Options(
        kills=args.kills,
        tables=args.tables,
        think=args.think,
        life=(low, high),
        duration=args.duration,
        seed=args.seed,
    )
    print(
        f"crash soak: {options.kills} kills, {options.tables} matches x {SEATS} players,"
        f" storage sync full; cap {options.duration:.0f} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="tulips-crash-") as temp:
        data_dir = args.data_dir or Path(temp) / "data"
        data_dir.mkdir(parents=True, exist_ok=True)
        log_path = Path(temp) / "server.log"
        report = asyncio.run(run_crash_soak(options, data_dir, log_path))
        report.log_path = keep_log(log_path, args.keep_log)
        lines = report.lines()
    print("\n".join(lines))
    return 0 if report.passed else 1
