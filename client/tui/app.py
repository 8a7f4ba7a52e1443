"""The terminal client: one Textual app on one SDK session.

The app owns everything the client knows (:class:`~client.tui.model.Follow`
and :class:`~client.tui.model.Lobby`), turns it into views
(:mod:`client.tui.viewmodel`) and sets them on its screens — attributes down.
Keys, buttons and screen messages come up as actions (``app.choose('k')``)
or messages (:class:`LobbyScreen.Picked`). All network work runs in workers:
one reads the session, the others send requests.

``tulips connect`` with no address first shows the servers found on the LAN
(:class:`ServerListScreen`, fed by a browsing worker; one entry per
announcement, so two servers called alike are two entries) and connects to
the one picked. A ``wss://`` server met for the first time is shown to the
player, who decides whether to trust it (:class:`TrustScreen`) — a picked
server as much as a typed address: anyone on the LAN can announce any name
and fingerprint, so the fingerprint it announced is only a hint. The prompt
says whether the certificate is the one announced; one that is not is
refused without asking (``announcement_mismatch``), and nothing reaches
``known_servers`` unless the player said yes.

End-of-game reveals are paced: ``secret_revealed`` events are applied one at
a time, ``reveal_delay`` seconds apart, and whatever follows them waits its
turn, so the order of messages is never changed (``turn_timer`` notices wait
in the same queue, after the events they follow).

A snapshot that skips events the log never told — the first one of a client
that (re)joins a running match, or one after a gap — fills the log from the
match's record (``replay``), at the place those events belong.
"""

from __future__ import annotations

import asyncio
import collections
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rich.text import Text
from textual import on, work
from textual.app import App
from textual.binding import Binding

import protocol as wire
from client.discovery import ServerInfo, follow
from client.sdk import CertificateRefused, ConnectError, ConnectionLost, Reconnected, RequestError
from client.trust import KnownServers, server_key
from protocol.limits import MAX_NAME_LENGTH

from .analysis import hint_values
from .hangup import HANGUP_STATUS, HangupGuard
from .houserules import STANDARD, house_rules_text
from .i18n import t
from .identity import IdentityStore
from .model import Follow, Lobby
from .narrate import describe
from .ratings import record_summary, seat_player
from .replay import page_marks
from .screens.account import LinkCodeScreen, RenameScreen, UseLinkScreen
from .screens.card import PlayerCardScreen
from .screens.connecting import ConnectingScreen
from .screens.dialogs import (
    ChatScreen,
    ConfirmQuitScreen,
    CreateMatchScreen,
    CreateSettings,
    JoinCodeScreen,
    PickScreen,
)
from .screens.final import FinalScreen
from .screens.help import HelpScreen
from .screens.history import HistoryScreen
from .screens.leaderboard import LeaderboardScreen
from .screens.lobby import LobbyInfo, LobbyScreen
from .screens.pages import OpenCard, OpenRecord
from .screens.servers import ServerListScreen
from .screens.table import TableScreen
from .screens.trust import TrustScreen
from .screens.tutorial import TutorialScreen
from .session import SessionFactory, SessionLike, real_session
from .tutorial import TUTORIAL_BOTS, TUTORIAL_SEATS, Tutorial
from .viewmodel import final_view, lobby_rows, table_view
from .widgets.toosmall import MIN_HEIGHT, MIN_WIDTH, NARROW_WIDTH

if TYPE_CHECKING:  # the replay viewer is imported when first opened
    from .screens.replay import Scheduler

__all__ = ["Plan", "QuickMatch", "ServerStarter", "TulipsApp"]

_KNOWN_ERRORS = frozenset(
    {
        "bad_join_code", "seat_taken", "match_not_open", "match_not_ready", "no_such_match",
        "not_your_turn", "illegal_action", "not_host", "server_full", "rate_limited",
        "not_in_match", "match_paused", "name_taken", "bad_link_code", "no_such_player",
    }
)  # fmt: skip
#: Pages of a match's record read to fill the log, at most (400 events each).
_RECALL_PAGES = 8
Paced = wire.Snapshot | wire.Event | wire.Prompt | wire.TurnTimer


class ServerStarter(Protocol):
    """Starts a server and says where it listens (``tulips play``'s local server)."""

    async def start(self) -> str:
        """Start the server; return its ``ws://`` URL once it answers."""
        ...


@dataclass(frozen=True, slots=True)
class QuickMatch:
    """``tulips play``: a match against bots, created and started at once."""

    players: int = 4
    strength: str = "medium"
    #: the ruleset it plays (``--ruleset``'s name); None: the printed rules
    ruleset: str | None = None
    #: ``tulips learn``: a tutorial (the server's fixed deal, explained step by step)
    tutorial: bool = False


@dataclass(frozen=True, slots=True)
class Plan:
    """Where to play and as whom."""

    name: str
    url: str = ""
    local: ServerStarter | None = None
    quick: QuickMatch | None = None
    #: no ``url``: list the servers on the LAN (browsing on these interfaces) to pick one
    discover: bool = False
    interfaces: tuple[str, ...] = ()
    #: the ``wss://`` server's certificate must have this fingerprint
    fingerprint: str | None = None
    #: ring the terminal's bell when it is the player's move (``--no-bell``: not)
    bell: bool = True
    #: the ruleset the new-match form starts with (``tulips play --ruleset``)
    ruleset: str | None = None
    #: a one-time code from another device of the player (``tulips connect --link``):
    #: the first hello says it, and this device is that player from then on
    link: str | None = None


#: Follows the LAN: the servers found, again whenever they change.
ServerFeed = Callable[[Sequence[str]], AsyncIterator[tuple[ServerInfo, ...]]]


class TulipsApp(App[int]):
    """Gift of Tulips in the terminal."""

    CSS_PATH = "tulips.tcss"
    ENABLE_COMMAND_PALETTE = False
    # From 80 columns the panels stand side by side. Below that they cannot (the
    # festival and the actions need 36 columns, the players and the log as many
    # again), so from 40 columns (a phone in portrait, in a browser) to 79 the
    # screens stack them (-narrow, tulips.tcss): the one other layout that fits.
    # Below 40 columns or 24 rows every screen says so instead of drawing itself cut off.
    HORIZONTAL_BREAKPOINTS = [
        (0, "-too-narrow"),
        (NARROW_WIDTH, "-narrow"),
        (MIN_WIDTH, "-wide-enough"),
    ]
    VERTICAL_BREAKPOINTS = [(0, "-too-short"), (MIN_HEIGHT, "-tall-enough")]
    BINDINGS = [
        Binding("ctrl+c", "quit", show=False, priority=True),
        Binding("question_mark", "help", show=False),
    ]

    def __init__(
        self,
        plan: Plan,
        *,
        sessions: SessionFactory | None = None,
        identity: IdentityStore | None = None,
        known_servers: KnownServers | None = None,
        servers: ServerFeed = follow,
        reveal_delay: float = 0.9,
        clock: Callable[[], float] = time.monotonic,
        handle_signals: bool = False,
        hangup: HangupGuard | None = None,
    ) -> None:
        super().__init__()
        self.plan = plan
        self.url = plan.url
        #: the rulesets the server offers, by name, as its welcome said
        self.rulesets: dict[str, wire.RulesetInfo] = {}
        #: each match's own ruleset, as its snapshot said
        self.match_rules: dict[str, wire.RulesetInfo] = {}
        #: the ruleset whose house rules the log has told, by match
        self._rules_told: dict[str, wire.RulesetInfo] = {}
        #: the pinned fingerprint (``--fingerprint``): the certificate must be this one
        self.fingerprint = plan.fingerprint
        #: the fingerprint the picked LAN server announced: a hint for the trust prompt
        #: about that server (``host:port``) only
        self.announced: str | None = None
        self._announced_by = ""
        self.sessions = sessions if sessions is not None else self._real_session
        self.identity = identity
        self.known_servers = known_servers
        self.servers = servers
        self.reveal_delay = reveal_delay
        self.handle_signals = handle_signals
        #: ends the process when the terminal goes away (``tulips`` itself; not in tests)
        self.hangup = hangup
        self.session: SessionLike | None = None
        #: who the server says we are (``welcome``): our player id and name there
        self.player_id: str | None = None
        self.player_name = plan.name
        #: each rated match's rating changes, by match, as the ``ratings`` notice said
        self.rating_changes: dict[str, tuple[wire.RatingChange, ...]] = {}
        self.follow = Follow(clock)
        #: the steps of the tutorial being played (a fresh one for every match)
        self.tutorial = Tutorial()
        self.lobby = Lobby()
        self.online = False
        self.picking = False
        self.failure: str | None = None
        self._queue: collections.deque[Paced] = collections.deque()
        self._pacing = False
        self._autostarted: set[str] = set()
        #: join codes typed for matches, offered again to their replay
        self._join_codes: dict[str, str] = {}
        #: runs the replay viewer's playing (None: Textual's timers; tests drive their own)
        self.replay_scheduler: Scheduler | None = None
        #: the last hint answered (shown while its decision is open), and the
        #: ``seq`` of the decision a hint is being computed for
        self.hint: wire.HintValues | None = None
        self.hint_asked: int | None = None
        self.connecting: ConnectingScreen
        self.lobby_screen: LobbyScreen
        self.table_screen: TableScreen

    # -- start and stop ------------------------------------------------------------------

    def on_mount(self) -> None:
        self.title = t("app.title")
        self.connecting = ConnectingScreen()
        self.lobby_screen = LobbyScreen()
        self.table_screen = TableScreen()
        self.install_screen(self.lobby_screen, "lobby")
        self.install_screen(self.table_screen, "table")
        self.push_screen(self.connecting)
        loop = asyncio.get_running_loop()
        if self.handle_signals:
            loop.add_signal_handler(signal.SIGTERM, self.exit)
        if self.hangup is not None:  # SIGHUP, and the terminal gone by any other sign
            self.hangup.install(lambda: loop.call_soon_threadsafe(self.exit, None, HANGUP_STATUS))
        self.set_interval(1.0, self._tick)
        self.run_session()

    def fail(self, message: str) -> None:
        """Stop with ``message`` for the command line to print."""
        self.failure = message
        self.exit(1, return_code=1)

    async def action_quit(self) -> None:
        """Leave the app (the session closes on the way out)."""
        self.exit(0)

    def action_ask_quit(self) -> None:
        """Quit — asking first while we play a running match (in ``tulips play``
        quitting ends the match; elsewhere a bot plays the seat)."""
        if not self.follow.running:
            self.exit(0)
            return

        def answer(quit_: bool | None) -> None:
            if quit_:
                self.exit(0)

        if not isinstance(self.screen, ConfirmQuitScreen):
            self.push_screen(ConfirmQuitScreen(local=self.plan.local is not None), answer)

    async def on_unmount(self) -> None:
        if self.session is not None:
            await self.session.close()

    # -- the session -----------------------------------------------------------------------

    @work(exclusive=True, group="session", exit_on_error=False)
    async def run_session(self) -> None:
        """Connect (starting the local server first if asked), then read every message."""
        if self.plan.local is not None:
            self.connecting.status = t("status.starting_server")
            try:
                self.url = await self.plan.local.start()
            except Exception as exc:  # whatever went wrong, say it in one line
                self.fail(t("error.local_server", reason=str(exc) or type(exc).__name__))
                return
        if self.plan.discover and not self.url:
            picked = await self._pick_server()
            if picked is None:
                self.exit(0)
                return
            self.url = picked.url
            self.announced, self._announced_by = picked.fingerprint, server_key(picked.url)
        self.connecting.status = t("status.connecting", url=self.url)
        session = await self._open()
        if session is None:
            return
        self.session = session
        self.online = True
        self._render_lobby()
        try:
            if self.plan.quick is not None:
                await self._quick_match(session, self.plan.quick)
            else:
                self._show("lobby")
                self.lobby.replace(list(await session.list_matches()))
                self._render_lobby()
        except RequestError as exc:
            self._refused(exc)
            self._show("lobby")
        await self._read(session)

    async def _read(self, session: SessionLike) -> None:
        """Take in every message of ``session`` until it closes (or another
        session, of a linked identity, replaces it)."""
        async for message in session:
            if session is not self.session:
                return
            self.on_server_message(message)
        if session is not self.session:
            return
        self.online = False
        self._render()
        self.notify(t("status.closed"), severity="error", timeout=30)

    @work(exclusive=True, group="session", exit_on_error=False)
    async def read_session(self, session: SessionLike) -> None:
        """Read a session that replaced the first one (a linked device)."""
        await self._read(session)

    async def _pick_server(self) -> ServerInfo | None:
        """Show the servers on the LAN, live, until the player picks one (None: quit)."""
        screen = ServerListScreen()
        picked: asyncio.Future[ServerInfo | None] = asyncio.get_running_loop().create_future()

        def done(server: ServerInfo | None) -> None:
            if not picked.done():
                picked.set_result(server)

        self.push_screen(screen, done)
        feed = self.run_worker(self._follow_lan(screen), group="lan", exit_on_error=False)
        try:
            return await picked
        finally:
            feed.cancel()

    async def _follow_lan(self, screen: ServerListScreen) -> None:
        try:
            async for servers in self.servers(self.plan.interfaces):
                screen.servers = servers
        except (OSError, ValueError) as exc:  # no usable interface, a socket refused
            self.fail(t("error.browse", reason=str(exc) or type(exc).__name__))

    def _real_session(
        self, url: str, name: str, token: str | None, *, link: str | None = None
    ) -> SessionLike:
        return real_session(
            url,
            name,
            token,
            fingerprint=self.fingerprint,
            trust=self.ask_trust,
            known_servers=self.known_servers,
            link=link,
        )

    async def ask_trust(self, server: str, fingerprint: str) -> bool:
        """Show a server's certificate fingerprint the first time; True if the player trusts it.

        A LAN server whose certificate is not the one it announced is refused
        without asking (:class:`CertificateRefused`, ``announcement_mismatch``):
        the player picked that announcement, and this is not its server."""
        announced = self.announced if server == self._announced_by else None
        if announced is not None and announced != fingerprint:
            raise CertificateRefused(
                f"the certificate of {server} is {fingerprint}, not the {announced} "
                "it announced on the LAN",
                "announcement_mismatch",
                server=server,
                actual=fingerprint,
                expected=announced,
            )
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(trusted: bool | None) -> None:
            if not answer.done():
                answer.set_result(bool(trusted))

        screen = TrustScreen(server, fingerprint, announced=announced is not None)
        self.push_screen(screen, done)
        return await answer

    def _connect_failure(self, exc: ConnectError) -> str:
        if not isinstance(exc, CertificateRefused):
            return t("error.connect", reason=str(exc))
        if exc.code == "certificate_changed":
            return t(
                "trust.changed",
                server=exc.server,
                expected=exc.expected,
                actual=exc.actual,
                path=exc.path,
                line=exc.line,
            )
        if exc.code == "announcement_mismatch":
            return t(
                "trust.not_announced", server=exc.server, expected=exc.expected, actual=exc.actual
            )
        if exc.code == "fingerprint_mismatch":
            return t("trust.mismatch", server=exc.server, expected=exc.expected, actual=exc.actual)
        return t("trust.declined", server=exc.server)

    async def _open(self) -> SessionLike | None:
        if self.plan.link is not None:  # this device becomes the player who showed the code
            session = self.sessions(self.url, self.plan.name, None, link=self.plan.link)
            try:
                self._welcomed(await session.open())
            except ConnectError as exc:
                self.fail(self._link_failure(exc))
                return None
            self._keep_token(session)
            return session
        token = self.identity.token_for(self.url) if self.identity is not None else None
        session = self.sessions(self.url, self.plan.name, token)
        try:
            self._welcomed(await session.open())
        except ConnectError as exc:
            if token is None or exc.code != "bad_token":
                self.fail(self._connect_failure(exc))
                return None
            assert self.identity is not None
            self.identity.forget(self.url)  # the server forgot us: start afresh
            session = self.sessions(self.url, self.plan.name, None)
            try:
                self._welcomed(await session.open())
            except ConnectError as again:
                self.fail(self._connect_failure(again))
                return None
        self._keep_token(session)
        return session

    def _keep_token(self, session: SessionLike) -> None:
        """Remember the session's token for this server (not for ``tulips play``'s own)."""
        if self.identity is not None and session.token is not None and self.plan.local is None:
            self.identity.remember(self.url, session.token)

    def _link_failure(self, exc: ConnectError) -> str:
        if exc.code == "bad_link_code":
            return t("profile.bad_link")
        if exc.code == "rate_limited":
            return t("errcode.rate_limited")
        return self._connect_failure(exc)

    def _match_ruleset(self) -> wire.RulesetInfo | None:
        """The followed match's ruleset: its snapshot's numbers, or those the
        server offers it with (None: no match, or the server did not say)."""
        match = self.follow.match_id
        if match is None:
            return None
        info = self.match_rules.get(match)
        if info is None and self.follow.summary is not None:
            info = self.rulesets.get(self.follow.summary.ruleset)
        return info

    def _tell_house_rules(self) -> None:
        """Say once in the match's log what its ruleset changes from the printed
        rules."""
        match, info = self.follow.match_id, self._match_ruleset()
        if match is None or info is None or self._rules_told.get(match) == info:
            return
        self._rules_told[match] = info
        text = house_rules_text(info, self.rulesets.get(STANDARD))
        if text is not None:
            self.follow.say(Text(text, style="italic"))

    def _welcomed(self, welcome: wire.Welcome) -> None:
        """Keep who we are there (a name taken gets a free variant: ``welcome.name``)
        and the rulesets the server offers (none said: the printed rules only)."""
        self.rulesets = {info.name: info for info in welcome.rulesets}
        self.player_id = welcome.player
        self.player_name = welcome.name or self.player_name

    async def _quick_match(self, session: SessionLike, quick: QuickMatch) -> None:
        self.connecting.status = t("status.dealing")
        if quick.tutorial:
            await self._create_tutorial(session, quick.strength)
            return
        await session.create_match(
            name=t("quick.name", name=self.plan.name)[:MAX_NAME_LENGTH],
            seats=quick.players,
            bots=[(seat, quick.strength) for seat in range(1, quick.players)],
            ruleset=quick.ruleset,
        )

    def on_server_message(self, message: object) -> None:
        """Take in one message from the session."""
        if isinstance(message, ConnectionLost):
            self.online = False
            self.follow.acting = False
            self.notify(t("status.lost"), severity="warning")
        elif isinstance(message, Reconnected):
            self.online = True
            self.notify(t("status.back"))
            watched = self.follow.match_id
            if watched is None:
                self.request(lambda s: self._refresh(s), latest="refresh")
            elif self.follow.seat is None:  # a spectator is not put back: it watches again
                code = self._join_codes.get(watched)
                self.request(lambda s: s.watch(watched, join_code=code), latest="watch")
        elif isinstance(message, wire.MatchList):
            self.lobby.replace(message.matches)
        elif isinstance(message, wire.MatchUpdate):
            self.lobby.update(message.match)
            if self.follow.update(message.match):
                self._maybe_autostart()
            self._tell_house_rules()
        elif isinstance(message, wire.MatchRemoved):
            self.lobby.remove(message.match)
        elif isinstance(message, wire.Joined):
            if self.follow.join(message):
                self.picking = False
                self.tutorial = Tutorial()
                self._rules_told.pop(message.match, None)
            self._tell_house_rules()
            self._show("table")
        elif isinstance(message, wire.Snapshot | wire.Event | wire.Prompt | wire.TurnTimer):
            if isinstance(message, wire.Snapshot) and message.ruleset is not None:
                self.match_rules[message.match] = message.ruleset
            self._pace(message)
            return
        elif isinstance(message, wire.RematchOffer):
            self._offered(message)
        elif isinstance(message, wire.Removed):
            self._removed(message)
        elif isinstance(message, wire.RatingsChanged):
            self._ratings_changed(message)
        elif isinstance(message, wire.ChatLine):
            self.follow.chat_line(Text.assemble((message.name, "bold"), ": ", message.text))
        elif isinstance(message, wire.Error) and message.id is None:
            self.notify(self._error_text(message.code, message.message), severity="error")
        self._render()

    # -- the match, paced -------------------------------------------------------------------

    def _pace(self, message: Paced) -> None:
        self._queue.append(message)
        if not self._pacing:
            self._drain()

    def _drain(self) -> None:
        self._pacing = False
        if not self.is_running:  # a timer's call while the app shuts down: the screens are going
            return
        while self._queue:
            message = self._queue.popleft()
            self._apply(message)
            if (
                self.reveal_delay > 0
                and isinstance(message, wire.Event)
                and isinstance(message.event, wire.SecretRevealed)
            ):
                self._pacing = True
                self.set_timer(self.reveal_delay, self._drain)
                break
        self._render()

    def _apply(self, message: Paced) -> None:
        follow = self.follow
        if isinstance(message, wire.Snapshot):
            self._take_snapshot(message)
            self._tell_house_rules()
        elif isinstance(message, wire.Event):
            outcome = follow.event(message)
            if outcome == "gap":
                self.request(lambda s: s.sync(), latest="sync")
            elif outcome == "applied":
                if follow.state is not None and not follow.state.legal_actions:
                    self.picking = False
                if follow.state is not None and self._in_tutorial():
                    self.tutorial.event(message.event, follow.state, follow.names())
                if isinstance(message.event, wire.MatchEnded):
                    self._show_final()
        elif isinstance(message, wire.TurnTimer):
            follow.turn_timer(message)
        elif follow.prompt(message):
            self.picking = False
            if follow.state is not None and self._in_tutorial():
                self.tutorial.prompt(message, follow.state)
            if self.plan.bell:
                self.bell()

    def _take_snapshot(self, message: wire.Snapshot) -> None:
        follow = self.follow
        known = follow.seq if follow.state is not None and follow.log else 0
        at = len(follow.log)
        if not follow.snapshot(message):
            return
        self.picking = False
        if message.seq > known:  # events the log never told: read them from the record
            self.run_worker(
                self._recall(message.match, known + 1, message.seq, at, message.state.turn > 0),
                group="recall",
                exit_on_error=False,
            )
        if message.state.scoring is not None:
            self._show_final()

    async def _recall(self, match: str, first: int, last: int, at: int, header: bool) -> None:
        """Tell events ``first``..``last`` of the match's record in the log, before
        its line ``at`` (a record the server will not give leaves the log as it is)."""
        if self.session is None:
            return
        events: list[tuple[wire.GameEvent, wire.PlayedBy | None]] = []
        seq = first
        try:
            for _ in range(_RECALL_PAGES):
                page = await self.session.replay(
                    match, join_code=self._join_codes.get(match), from_seq=seq
                )
                if not isinstance(page, wire.ReplayPage):
                    return
                marked = zip(page.events, page_marks(page), strict=True)
                events.extend(list(marked)[: last - seq + 1])
                seq = page.from_seq + len(page.events)
                if page.next_seq is None or seq > last:
                    break
        except (RequestError, ConnectionError, TimeoutError):
            return
        follow = self.follow
        if follow.match_id != match:
            return
        names = follow.names()
        lines = [
            line for e, by in events if (line := describe(e, names, follow.seat, by)) is not None
        ]
        if lines and header:
            lines.insert(0, Text(t("log.replayed"), style="dim italic"))
        follow.recall(at, lines)
        self._render_table()

    def _offered(self, offer: wire.RematchOffer) -> None:
        """Another player opened the rematch: offer it, where the scores are."""
        if not self.follow.rematch(offer):
            return
        finals = [screen for screen in self.screen_stack if isinstance(screen, FinalScreen)]
        for screen in finals:
            screen.offer = offer.host
        if self.screen not in finals:  # the scores say it; elsewhere, a note says it
            self.notify(t("final.rematch_offer", host=offer.host), timeout=10)

    def _tick(self) -> None:
        if self.follow.signals.ticking and self.is_running:  # not while the screens close
            self._render_table()
        # a step that came while a page was up (the help, a dialog) shows once it closes
        self._show_tutorial()

    # -- rendering -----------------------------------------------------------------------

    def _render(self) -> None:
        self._render_lobby()
        self._render_table()
        self._show_tutorial()

    # -- the tutorial ------------------------------------------------------------------------

    def _in_tutorial(self) -> bool:
        """Whether we play a tutorial match (its summary says so: the server's word)."""
        summary = self.follow.summary
        return summary is not None and summary.tutorial and self.follow.seat is not None

    def _show_tutorial(self) -> None:
        """Put the tutorial's current step over the table or the final scores,
        unless a note (or another page, the help) is already up."""
        step = self.tutorial.current if self._in_tutorial() else None
        if step is None or not self.is_running:
            return
        if self.screen is self.table_screen or isinstance(self.screen, FinalScreen):
            self.push_screen(TutorialScreen(step))

    def action_tutorial_next(self) -> None:
        """The player goes on: the next step in the note, or the note closes."""
        self.tutorial.next()
        note = self.screen
        if not isinstance(note, TutorialScreen):
            return
        step = self.tutorial.current if self._in_tutorial() else None
        if step is not None:
            note.show(step)
        else:
            note.dismiss()

    def action_tutorial(self) -> None:
        """Learn the game: a tutorial match against bots on this server."""
        self.request(lambda s: self._create_tutorial(s))

    async def _create_tutorial(self, session: SessionLike, strength: str = TUTORIAL_BOTS) -> None:
        await session.create_match(
            name=t("tutorial.match_name", name=self.plan.name)[:MAX_NAME_LENGTH],
            seats=TUTORIAL_SEATS,
            bots=[(seat, strength) for seat in range(1, TUTORIAL_SEATS)],
            tutorial=True,
            hints=True,  # h shows what the analysis thinks of each option
        )

    def _render_lobby(self) -> None:
        self.lobby_screen.rows = lobby_rows(self.lobby.matches)
        self.lobby_screen.info = LobbyInfo(
            server=self.url, name=self.player_name, online=self.online
        )

    def _render_table(self) -> None:
        follow = self.follow
        self.table_screen.view = table_view(
            follow.state,
            follow.summary,
            follow.seat,
            follow.log,
            online=self.online,
            host=follow.host,
            picking=self.picking,
            acting=follow.acting,
            seconds_left=follow.seconds_left(),
            points=follow.points(),
            rankings=follow.rankings(),
            since=follow.since,
            timers=follow.signals.seconds(),
            bot_in=follow.signals.bot_in(),
            join_code=self._join_codes.get(follow.match_id or ""),
            chat=follow.chat,
            hint=hint_values(follow.last_prompt, self.hint),
            thinking=self._thinking(),
        )

    def _thinking(self) -> bool:
        """A hint is being computed for the decision open now."""
        prompt = self.follow.last_prompt
        return prompt is not None and self.hint_asked == prompt.seq

    def _show(self, name: str) -> None:
        """Make the lobby or the table the screen on view, closing what is above
        it (the stack is always the blank default screen, then one of ours)."""
        target = self.get_screen(name)
        if self.screen is target:
            return
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(target)

    def _show_final(self) -> None:
        state = self.follow.state
        if state is None or state.scoring is None:
            return
        if any(isinstance(screen, FinalScreen) for screen in self.screen_stack):
            return
        self._show("table")
        offer = self.follow.signals.rematch
        summary = self.follow.summary
        self.push_screen(
            FinalScreen(
                final_view(state.scoring, summary, self.follow.seat, state),
                offer=offer.host if offer is not None else None,
                rated=summary is not None and summary.rated,
                ratings=self.rating_changes.get(self.follow.match_id or ""),
                analysable=self.follow.seat is not None
                or (summary is not None and summary.open_box),
            )
        )

    def _ratings_changed(self, notice: wire.RatingsChanged) -> None:
        """A rated match's ratings moved: the final screen shows by how much."""
        self.rating_changes[notice.match] = notice.changes
        if notice.match != self.follow.match_id:
            return
        for screen in self.screen_stack:
            if isinstance(screen, FinalScreen):
                screen.ratings = notice.changes

    # -- what the player does --------------------------------------------------------------

    def action_choose(self, key: str) -> None:
        """A key or button of the action panel."""
        view = self.table_screen.view
        if view is None or self.screen is not self.table_screen:
            return
        choice = next((c for c in view.actions.choices if c.key == key), None)
        if choice is None:
            return
        if choice.label == "choice.start":
            self.request(lambda s: s.start())
        elif choice.label == "choice.start_here":
            self.request(lambda s: s.start(without_absent=True))
        elif choice.label == "choice.add_bot":
            self._ask_bot_strength()
        elif choice.label == "choice.remove_seat":
            self._ask_seat_to_remove()
        elif choice.label == "choice.give":
            self.picking = True
        elif choice.label == "choice.back":
            self.picking = False
        elif choice.action is not None:
            self.picking = False
            self.follow.acting = True
            self.send_action(choice.action, self.follow.seq)
        self._render_table()

    def action_hint(self) -> None:
        """Ask for a hint on the decision open now (issue 32), if the match allows it."""
        follow = self.follow
        if self.screen is not self.table_screen or follow.match_id is None:
            return
        if follow.summary is None or not follow.summary.hints:
            self.notify(t("hint.off"), severity="warning")
            return
        prompt = follow.last_prompt
        if follow.seat is None or prompt is None or not prompt.actions or follow.acting:
            self.notify(t("hint.no_decision"), severity="warning")
            return
        if self.hint_asked == prompt.seq or hint_values(prompt, self.hint):
            return  # on its way, or shown already
        self.hint_asked = prompt.seq
        self._render_table()
        self.ask_hint(prompt.seq)

    @work(group="hint", exit_on_error=False)
    async def ask_hint(self, seq: int) -> None:
        """Fetch the hint for the decision at ``seq``; it shows while that decision is open."""
        if self.session is None:
            return
        try:
            self.hint = await self.session.hint(seq)
        except RequestError as exc:
            if exc.code == "hints_off":
                self.notify(t("hint.off"), severity="warning")
            elif exc.code == "analysis_busy":
                self.notify(t("hint.busy"), severity="warning")
            elif exc.code not in ("decision_taken", "not_your_turn"):
                self._refused(exc)  # a decision taken meanwhile needs no word
        except (ConnectionError, TimeoutError):
            self.notify(t("status.lost"), severity="warning")
        finally:
            if self.hint_asked == seq:
                self.hint_asked = None
        self._render_table()

    def _ask_bot_strength(self) -> None:
        """The host picks the new bot's strength; it takes the lowest free seat."""

        def picked(index: int | None) -> None:
            if index is not None:
                strength = wire.STRENGTHS[index]
                self.request(lambda s: s.add_bot(strength=strength))

        options = [t(f"strength.{strength}") for strength in wire.STRENGTHS]
        self.push_screen(PickScreen(t("bot.title"), t("bot.prompt"), options), picked)

    def _ask_seat_to_remove(self) -> None:
        """The host picks which seat (not their own) to free."""
        summary = self.follow.summary
        if summary is None:
            return
        seats = [s for s in summary.seats if s.kind != "empty" and s.seat != self.follow.seat]

        def picked(index: int | None) -> None:
            if index is not None:
                seat = seats[index].seat
                self.request(lambda s: s.remove_seat(seat))

        options = [t("remove.seat", n=s.seat + 1, name=s.name or "?") for s in seats]
        self.push_screen(PickScreen(t("remove.title"), t("remove.prompt"), options), picked)

    def _removed(self, notice: wire.Removed) -> None:
        """The host took our seat: back to the lobby, told why."""
        if notice.match != self.follow.match_id:
            return
        self.follow.leave()
        self.picking = False
        self.notify(t("removed.notice", host=notice.host), severity="warning")
        self._show("lobby")
        self.request(lambda s: self._refresh(s), latest="refresh")

    @work(exclusive=True, group="act", exit_on_error=False)
    async def send_action(self, action: wire.Action, seq: int) -> None:
        """Propose an action for the decision shown at event ``seq``; a refusal
        is shown and the choices come back."""
        if self.session is None:
            return
        try:
            await self.session.act(action, seq=seq)
        except RequestError as exc:
            self._refused(exc)
        except (ConnectionError, TimeoutError):
            pass  # the prompt comes again after the reconnect
        else:
            return
        self.follow.acting = False
        self._render_table()

    def request(
        self, call: Callable[[SessionLike], Awaitable[object]], latest: str | None = None
    ) -> None:
        """Send a request in a worker of its own; a refusal becomes a notification.

        Each request completes or fails by itself: a chat line never cancels a
        leave. Only requests of one ``latest`` kind (a refresh of the lobby, a
        resync) replace a half-done one of that kind, whose answer is stale anyway."""
        self.run_worker(
            self._request(call),
            group=latest or "request",
            exclusive=latest is not None,
            exit_on_error=False,
        )

    async def _request(self, call: Callable[[SessionLike], Awaitable[object]]) -> None:
        if self.session is None:
            return
        try:
            await call(self.session)
        except RequestError as exc:
            self._refused(exc)
        except (ConnectionError, TimeoutError):
            self.notify(t("status.lost"), severity="warning")

    async def _refresh(self, session: SessionLike) -> None:
        self.lobby.replace(list(await session.list_matches()))
        self._render_lobby()

    def _maybe_autostart(self) -> None:
        """Start at once when we host and every other seat is a bot."""
        follow, summary = self.follow, self.follow.summary
        if (
            summary is None
            or summary.status != "open"
            or not follow.host
            or summary.match in self._autostarted
            or any(s.kind != "bot" and s.seat != follow.seat for s in summary.seats)
        ):
            return
        self._autostarted.add(summary.match)
        self.request(lambda s: s.start())

    def _error_text(self, code: str, message: str) -> str:
        if code in _KNOWN_ERRORS:
            return t(f"errcode.{code}")
        return t("errcode.other", code=code, message=message)

    def _refused(self, exc: RequestError) -> None:
        self.notify(self._error_text(exc.code, exc.error.message), severity="error")

    # -- actions of the screens ----------------------------------------------------------

    def action_help(self) -> None:
        """Show the rules in brief (or close them)."""
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen(self._match_ruleset() or self.rulesets.get(STANDARD)))

    def action_new_match(self) -> None:
        """Ask for a new match's settings, then create it."""

        def create(settings: CreateSettings | None) -> None:
            if settings is not None:
                self.request(lambda s: self._create(s, settings))

        self.push_screen(
            CreateMatchScreen(
                self._fresh_match_name(), rulesets=tuple(self.rulesets), ruleset=self.plan.ruleset
            ),
            create,
        )

    def _fresh_match_name(self) -> str:
        """The new-match form's name: "Ada's table", or "Ada's table 2" (3, …)
        when the lobby lists one of that name already (a second match of the evening)."""
        base = t("quick.name", name=self.plan.name)[:MAX_NAME_LENGTH]
        taken = {summary.name for summary in self.lobby.matches.values()}
        name, number = base, 1
        while name in taken and number < 100:
            number += 1
            suffix = f" {number}"
            name = base[: MAX_NAME_LENGTH - len(suffix)] + suffix
        return name

    async def _create(self, session: SessionLike, settings: CreateSettings) -> None:
        joined = await session.create_match(
            name=settings.name,
            seats=settings.seats,
            bots=settings.bot_seats,
            join_code=settings.join_code,
            turn_timer=settings.turn_timer,
            first_seat=settings.first_seat,
            open_box=settings.open_box,
            ruleset=settings.ruleset,
            rated=settings.rated,
            hints=settings.hints,
        )
        if settings.join_code is not None and isinstance(joined, wire.Joined):
            self._join_codes[joined.match] = settings.join_code

    def action_chat(self) -> None:
        """Say something to the table."""

        def say(line: str | None) -> None:
            if line:
                self.request(lambda s: s.chat(line))

        if self.follow.match_id is not None:
            self.push_screen(ChatScreen(), say)

    def action_refresh_lobby(self) -> None:
        """Ask the server for its matches again."""
        self.request(lambda s: self._refresh(s), latest="refresh")

    @on(LobbyScreen.Picked)
    def pick_match(self, event: LobbyScreen.Picked) -> None:
        """Join or watch a match from the lobby (asking for its code if it has one)."""
        summary = self.lobby.matches.get(event.match)
        if summary is None:
            return
        if event.how == "replay":
            if summary.status != "finished":
                self.notify(t("replay.not_finished"), severity="warning")
            else:
                self.open_replay(event.match, summary)
            return

        def go(code: str | None) -> None:
            async def enter(session: SessionLike) -> None:
                if event.how == "join":
                    if not await self._join(session, summary, code):
                        return
                else:
                    await session.watch(event.match, join_code=code)
                if code:  # it worked: the match's replay will need it too
                    self._join_codes[event.match] = code

            self.request(enter)

        if summary.has_join_code:
            self.push_screen(JoinCodeScreen(), lambda code: go(code) if code else None)
        else:
            go(None)

    async def _join(
        self, session: SessionLike, summary: wire.MatchSummary, code: str | None
    ) -> bool:
        """Join from the lobby (True: joined); a refusal says why in the match's own terms."""
        try:
            await session.join(summary.match, join_code=code)
        except RequestError as exc:
            full = all(s.kind != "empty" for s in summary.seats)
            key = {
                ("match_not_open", "finished"): "lobby.refused_over",
                ("match_not_open", "running"): "lobby.refused_running",
                ("match_not_open", "paused"): "lobby.refused_running",
                ("seat_taken", "open"): "lobby.refused_full" if full else "",
            }.get((exc.code, summary.status))
            if not key:
                raise
            self.notify(t(key), severity="error")
            return False
        return True

    def action_play_again(self) -> None:
        """A rematch of the finished match (or the one another player opened);
        a spectator is not offered one."""
        if self.follow.seat is None:
            return
        self.request(lambda s: s.play_again())

    def open_replay(
        self,
        match: str,
        summary: wire.MatchSummary | None = None,
        points: wire.Points | None = None,
        *,
        analyse: bool = False,
        learn: bool = False,
    ) -> None:
        """Open the replay viewer over the current screen (it asks for the join
        code itself if the server wants one we do not have); ``analyse``: with
        the analysis, ``learn``: and learning from the mistakes at once."""
        from .screens.replay import ReplayScreen  # not needed for the first screen

        if self.session is None:
            return
        self.push_screen(
            ReplayScreen(
                self.session,
                match,
                summary=summary,
                points=points,
                join_code=self._join_codes.get(match),
                scheduler=self.replay_scheduler,
                analyse=analyse,
                learn=learn,
            )
        )

    def action_replay_match(self, how: str = "") -> None:
        """Replay the match just finished, its festival legend from our own state
        (``how``: "analyse" with the analysis, "learn" to learn from it)."""
        follow = self.follow
        if follow.match_id is not None:
            points = follow.state.points if follow.state is not None else None
            self.open_replay(
                follow.match_id,
                follow.summary,
                points,
                analyse=how == "analyse",
                learn=how == "learn",
            )

    def action_show_scores(self) -> None:
        """Back to the final scores from the table."""
        if not isinstance(self.screen, FinalScreen):
            self._show_final()

    def action_leave(self) -> None:
        """Leave the match for the lobby (a running seat is played by the server)."""

        async def leave(session: SessionLike) -> None:
            if self.follow.match_id is not None:
                await session.leave()
            self.follow.leave()
            self.picking = False
            self._show("lobby")
            await self._refresh(session)

        self.request(leave)

    # -- profiles, ratings and history -------------------------------------------------

    def _push_page(self, screen: LeaderboardScreen | HistoryScreen | PlayerCardScreen) -> None:
        if self.session is not None:
            self.push_screen(screen)

    def action_leaderboard(self) -> None:
        """The leaderboard, from its first page."""
        if self.session is not None:
            self._push_page(LeaderboardScreen(self.session, self.player_id))

    def action_history(self) -> None:
        """The player's finished matches, latest first."""
        if self.session is not None:
            self._push_page(HistoryScreen(self.session))

    def action_profile(self) -> None:
        """The player's own card, with the profile's settings."""
        if self.session is not None:
            self._push_page(PlayerCardScreen(self.session, None, own=True))

    @on(OpenCard)
    def open_card(self, event: OpenCard) -> None:
        """A player's card (the player's own opens as their profile, with its
        settings, away from a match: linking another identity leaves it)."""
        if self.session is not None:
            own = event.player == self.player_id and self.follow.match_id is None
            self._push_page(PlayerCardScreen(self.session, event.player, own=own))

    @on(OpenRecord)
    def open_record(self, event: OpenRecord) -> None:
        """A finished match from a history or a card, in the replay viewer."""
        self.open_replay(event.record.match, record_summary(event.record))

    def action_player_cards(self) -> None:
        """Pick a player of the match (waiting room, final screen) to see their card."""
        summary = self.follow.summary
        if summary is None:
            return
        seats = [s for s in summary.seats if s.kind != "empty"]

        def picked(index: int | None) -> None:
            if index is not None:
                self._card_of(summary, seats[index])

        options = [s.name or "?" for s in seats]
        self.push_screen(PickScreen(t("card.pick_title"), t("card.pick_prompt"), options), picked)

    def _card_of(self, summary: wire.MatchSummary, seat: wire.SeatInfo) -> None:
        """Open the card of the player in ``seat``: ours, a bot strength's, or
        the person's the seat names (``SeatInfo.player``)."""
        player = self._seat_player(summary, seat)
        if player is None:
            self.notify(t("card.unknown", name=seat.name or "?"), severity="warning")
            return
        self.post_message(OpenCard(player))

    def _seat_player(self, summary: wire.MatchSummary, seat: wire.SeatInfo) -> str | None:
        if seat.seat == self.follow.seat and summary.match == self.follow.match_id:
            return self.player_id
        return seat_player(seat) or seat.player

    def action_rename(self) -> None:
        """Ask for a new name (a name another player has is said in the dialog)."""
        if self.session is None:
            return

        def done(name: str | None) -> None:
            if name:
                self.notify(t("profile.renamed", name=name))
                self._reload_own_card()

        self.push_screen(RenameScreen(self._rename, self.player_name), done)

    async def _rename(self, name: str) -> str | None:
        if self.session is None:
            return t("status.lost")
        try:
            await self.session.rename(name)
        except RequestError as exc:
            if exc.code == "name_taken":
                return t("profile.name_taken", name=name)
            return self._error_text(exc.code, exc.error.message)
        except (ConnectionError, TimeoutError):
            return t("status.lost")
        self.player_name = name
        self._render_lobby()
        return None

    def _reload_own_card(self) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, PlayerCardScreen) and screen.own:
                screen.load()

    def action_link_code(self) -> None:
        """Show a one-time code that links another device to this player."""

        async def show(session: SessionLike) -> None:
            issued = await session.link_code()
            self.push_screen(LinkCodeScreen(issued.code, issued.expires_in))

        self.request(show)

    def action_use_link(self) -> None:
        """Type the code another device shows: this device becomes that player."""

        def done(code: str | None) -> None:
            if code:
                self.notify(t("profile.linked", name=self.player_name))
                self._reload_own_card()

        self.push_screen(UseLinkScreen(self._link), done)

    async def _link(self, code: str) -> str | None:
        """Say hello again with ``code``; on a welcome, the new session (and its
        token for this server) replaces the old one, and the lobby is read anew."""
        session = self.sessions(self.url, self.player_name, None, link=code)
        try:
            welcome = await session.open()
        except ConnectError as exc:
            return self._link_failure(exc)
        old, self.session = self.session, session
        self._welcomed(welcome)
        self._keep_token(session)
        self.online = True
        self.read_session(session)
        if old is not None:
            await old.close()
        self.follow.leave()
        self.lobby.replace(list(await session.list_matches()))
        self._render()
        return None
