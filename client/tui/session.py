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
    async def analyse(
        self,
        match: str,
        *,
        seat: int | None = None,
        join_code: str | None = None,
        progress: Callable[[wire.AnalysisProgress], object] | None = None,
    ) -> wire.AnalysisReport: ...
    async def hint(self, seq: int | None = None) -> wire.HintValues: ...


#: Makes a session: (url, name, token) -> session.
SessionFactory = Callable[[str, str, "str | None"], SessionLike]


def real_session(
    url: str,
    name: str,
    token: str | None,
    *,
    fingerprint: str | None = None,
    trust: TrustCallback | None = None,
    known_servers: KnownServers | None = None,
) -> SessionLike:
    """A real SDK session that reconnects by itself with its token (and checks a
    ``wss://`` server's certificate by its fingerprint: :mod:`client.trust`)."""
    return Session(
        url,
        name,
        token=token,
        client=TUI_CLIENT,
        reconnect=True,
        fingerprint=fingerprint,
        trust=trust,
        known_servers=known_servers,
    )
