"""A player's card: name, rating with its uncertainty and leaderboard place,
matches, wins, mean points, since when, and the latest matches — Enter (or
``v``) replays the one under the cursor when the server still keeps it.
Opened from the leaderboard, the waiting room and the final screen (``p``),
and as the player's own profile from the lobby (``p``), where it also offers
the profile's settings: rename, show a code to link another device, and
enter a code another device shows."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid

import protocol as wire

from ..i18n import t
from ..ratings import change_text, date_text, rating_text, record_players, record_seat
from ..session import SessionLike
from ..widgets.records import Record
from ..widgets.touch import TouchButton
from .pages import PageScreen

__all__ = ["PlayerCardScreen", "record_lines", "record_rating"]


def record_rating(record: wire.MatchRecord) -> Text:
    """How the match moved the listed player's rating: the change, "not
    counted" (a rated match the server's stand-in mostly played), or "unrated"."""
    if record.rating is not None:
        return change_text(record.rating)
    if record.rated:
        return Text(t("rating.not_counted"), style="dim")
    return Text(t("rating.unrated"), style="dim")


def _place(record: wire.MatchRecord) -> Text:
    seat = record_seat(record)
    if seat is None:
        return Text("–")
    return Text(t("history.place", place=t(f"rank.{seat.rank}"), players=len(record.seats)))


def _points(record: wire.MatchRecord) -> Text:
    seat = record_seat(record)
    return Text("–" if seat is None else str(seat.points), justify="right")


def _match(record: wire.MatchRecord) -> Text:
    text = Text(record.name, style="bold")
    if not record.replay:
        text.append(" " + t("history.no_replay"), style="italic dim")
    text.append("\n")
    text.append(record_players(record), style="dim")
    return text


def record_lines(record: wire.MatchRecord) -> Record:
    """A finished match as a row: date, match and players, place, points, rating."""
    cells = (
        Text(date_text(record.finished_at)),
        _match(record),
        _place(record),
        _points(record),
        record_rating(record),
    )
    stacked = Text.assemble(_match(record), "\n", date_text(record.finished_at), " · ")
    stacked.append_text(_place(record))
    stacked.append(" · " + t("history.points", points=_points(record).plain) + " · ")
    stacked.append_text(record_rating(record))
    return Record(key=record.match, cells=cells, stacked=stacked)


def record_headers() -> tuple[str, ...]:
    """The columns of a list of finished matches."""
    return (
        t("history.date"),
        t("history.match"),
        t("history.place_header"),
        t("history.points_header"),
        t("history.rating"),
    )


class PlayerCardScreen(PageScreen):
    """Shows one player's :class:`~protocol.ProfileCard`."""

    BINDINGS = [
        *PageScreen.BINDINGS,
        Binding("v", "replay", show=False),
        Binding("h", "app.history", show=False),
        Binding("e", "app.rename", show=False),
        Binding("k", "app.link_code", show=False),
        Binding("u", "app.use_link", show=False),
    ]
    TITLE_KEY = "card.title"

    def __init__(self, session: SessionLike, player: str | None, *, own: bool = False) -> None:
        """``player``: whose card (None: the player's own); ``own``: it is the
        player's own, with the profile's settings."""
        super().__init__(session)
        self.player = player
        self.own = own or player is None
        self.card: wire.ProfileCard | None = None

    def compose_extra(self) -> ComposeResult:
        if self.own:
            with Grid(id="card-settings"):
                yield TouchButton(t("profile.rename"), action="app.rename", id="rename")
                yield TouchButton(t("profile.link"), action="app.link_code", id="link-code")
                yield TouchButton(t("profile.use_link"), action="app.use_link", id="use-link")

    async def fetch(self) -> None:
        self.card = await self.session.profile(self.player)

    def records(self) -> tuple[tuple[str, ...], list[Record], int]:
        recent = self.card.recent if self.card is not None else ()
        return record_headers(), [record_lines(record) for record in recent], 1

    def info(self) -> Text:
        card = self.card
        if card is None:
            return Text()
        text = Text(card.name, style="bold")
        if card.kind == "bot":
            strength = t(f"strength.{card.strength}") if card.strength else ""
            text.append("  " + t("card.bots", strength=strength), style="italic cyan")
        text.append("\n")
        if card.rating is None:
            text.append(t("card.unrated"), style="dim")
        else:
            text.append(t("card.rating", rating=rating_text(card.rating)), style="bold")
            if card.rank is not None:
                text.append(" · " + t("card.rank", rank=card.rank))
        text.append("\n")
        facts = [t("card.matches", matches=card.matches, wins=card.wins)]
        if card.matches:
            facts.append(t("card.win_rate", percent=round(100 * card.wins / card.matches)))
        if card.mean_points is not None:
            facts.append(t("card.mean_points", points=f"{card.mean_points:.1f}"))
        facts.append(t("card.rated_matches", rated=card.rated_matches))
        if card.since is not None:
            facts.append(t("card.since", date=date_text(card.since)))
        text.append(" · ".join(facts))
        text.append("\n")
        text.append(t("card.recent"), style="bold underline")
        return text

    def note(self) -> Text:
        if self.card is not None and not self.card.recent:
            return Text(t("card.no_matches"), style="italic dim")
        return Text()

    def keys(self) -> tuple[tuple[str, str], ...]:
        history = (("keyname.h", "keys.history"),) if self.own else ()
        return (
            ("keyname.enter", "keys.replay"),
            *history,
            ("keyname.escape", "keys.back"),
        )

    def picked(self, key: str) -> None:
        self.action_replay(key)

    def action_replay(self, key: str | None = None) -> None:
        """Replay the recent match under the cursor, if the server keeps it."""
        self.replay_record(self.card.recent if self.card is not None else (), key)
