"""The SDK as the app uses it: the methods of :class:`client.sdk.Session` the
screens need, written down as a :class:`typing.Protocol` so tests can hand the
app a scripted fake with fixed protocol messages instead of a socket.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Protocol

import protocol as wire
from client.sdk import ConnectionLost, Reconnected, Session, TrustCallback
from client.trust import KnownServers

__all__ = ["TUI_CLIENT", "SessionFactory", "SessionLike", "real_session"]

#: What the terminal client calls itself in ``hello``.
TUI_CLIENT = "tulips-tui/0.1"


class SessionLike(Protocol):
    """The part of :class:`client.sdk.Session` the app relies on."""

    token: str | None

    async def open(self) -> wire.Welcome: ...
    async def close(self) -> None: ...
    def __aiter__(self) -> AsyncIterator[wire.ServerMessage | ConnectionLost | Reconnected]: ...
    async def list_matches(self) -> Sequence[wire.MatchSummary]: ...
    async def create_match(
        self,
        *,
        name: str = ...,
        seats: int = ...,
        bots: Sequence[tuple[int, str]] = ...,
        join_code: str | None = ...,
        turn_timer: float | None = ...,
        first_seat: int | None = ...,
        open_box: bool = ...,
        ruleset: str | None = ...,
        tutorial: bool = ...,
        rated: bool | None = ...,
        hints: bool = ...,
    ) -> wire.Joined: ...
    async def join(
        self, match: str, seat: int | None = None, join_code: str | None = None
    ) -> wire.Joined: ...
    async def watch(self, match: str, join_code: str | None = None) -> wire.Joined: ...
    async def leave(self) -> None: ...
    async def start(self, *, without_absent: bool = ...) -> None: ...
    async def add_bot(self, seat: int | None = ..., strength: wire.Strength = ...) -> None: ...
    async def remove_seat(self, seat: int) -> None: ...
    async def play_again(self) -> wire.Joined: ...
    async def act(self, action: wire.Action, *, seq: int | None) -> None: ...
    async def sync(self) -> wire.Snapshot: ...
    async def chat(self, text: str) -> None: ...
    async def replay(
        self, match: str, *, join_code: str | None = None, from_seq: int = 1
    ) -> wire.ReplayPage: ...
    async def profile(self, player: str | None = None) -> wire.ProfileCard: ...
    async def leaderboard(self, offset: int = 0, limit: int = 20) -> wire.LeaderboardPage: ...
    async def history(self, before: int | None = None, limit: int = 10) -> wire.HistoryPage: ...
    async def link_code(self) -> wire.LinkCodeIssued: ...
    async def rename(self, name: str) -> None: ...
    async def analyse(
        self,
        match: str,
        *,
        seat: int | None = None,
        join_code: str | None = None,
        progress: Callable[[wire.AnalysisProgress], object] | None = None,
    ) -> wire.AnalysisReport: ...
    async def hint(self, seq: int | None = None) -> wire.HintValues: ...


class SessionFactory(Protocol):
    """Makes a session: (url, name, token), or with ``link``: a one-time code
    from another device of the player, said in place of a token."""

    def __call__(
        self, url: str, name: str, token: str | None, *, link: str | None = None
    ) -> SessionLike: ...


def real_session(
    url: str,
    name: str,
    token: str | None,
    *,
    fingerprint: str | None = None,
    trust: TrustCallback | None = None,
    known_servers: KnownServers | None = None,
    link: str | None = None,
) -> SessionLike:
    """A real SDK session that reconnects by itself with its token (and checks a
    ``wss://`` server's certificate by its fingerprint: :mod:`client.trust`);
    ``link``: a one-time code that makes it another device of a player."""
    return Session(
        url,
        name,
        token=token,
        link=link,
        client=TUI_CLIENT,
        reconnect=True,
        fingerprint=fingerprint,
        trust=trust,
        known_servers=known_servers,
    )
