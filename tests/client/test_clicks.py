"""The mouse does what the keys do: every button and option of the table,
the lobby and their dialogs is clicked with the pilot, and each must have
the effect its key has (an option sends its ``act`` with the prompt's
``seq``; a dialog's buttons answer it; the final screen's buttons go where
their keys go; the trust prompt's buttons answer it; a key on the key bar
is pressed by a click). Issue "At the table": every button and option can
be clicked."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Button, DataTable

import protocol as wire
from client.tui import i18n
from client.tui.app import TulipsApp
from client.tui.i18n import t
from client.tui.screens.dialogs import ConfirmQuitScreen, CreateMatchScreen, JoinCodeScreen
from client.tui.screens.final import FinalScreen
from client.tui.screens.help import HelpScreen
from client.tui.screens.lobby import LobbyScreen
from client.tui.screens.table import TableScreen
from client.tui.screens.trust import TrustScreen
from client.tui.widgets.bars import KeyBar, key_press
from protocol.lan import fingerprint

from . import fakes
from .driver import until
from .screens import running, settle

FP = fingerprint(b"the kitchen server's certificate")


def option(pilot: Pilot[Any], key: str) -> Button:
    """The actions panel's button for ``key`` (its label starts with the key's name)."""
    for button in pilot.app.screen.query(".choice").results(Button):
        if str(button.label).split()[0] in (key, {"escape": "Esc"}.get(key)):
            return button
    labels = [str(b.label) for b in pilot.app.screen.query(".choice").results(Button)]
    raise AssertionError(f"no option for {key!r} among {labels}")


async def click(pilot: Pilot[Any], widget: Any) -> None:
    """Click ``widget`` (it must be on screen to be hit) and let the app react."""
    assert await pilot.click(widget), f"{widget} could not be clicked"
    await pilot.pause()
    await pilot.pause()


def mode(app: TulipsApp) -> str | None:
    """The actions panel's mode now."""
    view = app.table_screen.view
    return view.actions.mode if view is not None else None


def acts(session: fakes.ScriptedSession) -> list[tuple[wire.Action, int | None]]:
    """Every action the app sent, with the seq it sent it at."""
    return [(args[0], kw["seq"]) for kind, args, kw in session.requests if kind == "act"]


async def test_each_turn_option_clicked_sends_its_action_with_the_prompt_s_seq() -> None:
    """k, f and s clicked: each sends the action its key sends, at seq 97."""
    for key, action in (("k", wire.Keep()), ("f", wire.AddFaceUp()), ("s", wire.AddSecret())):
        async with running(fakes.mid_game()) as (_app, pilot, session):
            await click(pilot, option(pilot, key))
            assert acts(session) == [(action, 97)], key


async def test_give_clicked_opens_the_receivers_and_back_and_a_receiver_click() -> None:
    """g opens the receivers; "back" closes them; a receiver gives to that seat."""
    async with running(fakes.mid_game()) as (app, pilot, session):
        await click(pilot, option(pilot, "g"))
        assert mode(app) == "give"
        await click(pilot, option(pilot, "escape"))
        assert mode(app) == "turn"
        await click(pilot, option(pilot, "g"))
        await click(pilot, option(pilot, "3"))
        assert acts(session) == [(wire.Give(to_seat=2), 97)]


async def test_an_opening_option_clicked_sends_that_choice() -> None:
    """R11: the second opening option puts the pink 4 face down."""
    async with running(fakes.opening()) as (_app, pilot, session):
        await click(pilot, option(pilot, "2"))
        # the seq of the last event seen (a bot's opening came after the prompt), as a key sends
        assert acts(session) == [(wire.Opening(secret="pink-4"), 5)]


async def test_the_host_clicks_start_on_a_full_table() -> None:
    """The waiting room's start option starts the match, like s."""
    async with running(fakes.waiting_room()) as (_app, pilot, session):
        full = (*fakes.THREE_SEATS[:2], wire.SeatInfo(seat=2, kind="human", name="Bea"))
        session.feed(wire.MatchUpdate(match=fakes.summary("open", seats=full)))
        await settle(pilot, session)
        await click(pilot, option(pilot, "s"))
        assert ("start", (), {}) in session.requests


async def test_the_new_match_form_s_buttons() -> None:
    """Cancel closes the form, as Esc; Create asks the server, as Ctrl+S."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, session):
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, CreateMatchScreen)
        await click(pilot, "#create-cancel")
        assert isinstance(app.screen, LobbyScreen)
        assert not any(kind == "create_match" for kind, _a, _k in session.requests)
        await pilot.press("n")
        await pilot.pause()
        await click(pilot, "#create-ok")
        await until(pilot, lambda: any(kind == "create_match" for kind, _a, _k in session.requests))


async def test_a_lobby_row_clicked_joins_it() -> None:
    """A click on a row joins its match, like Enter: Bea's private match asks
    for its code first."""
    async with running([], matches=fakes.lobby_matches()) as (app, pilot, _session):
        table = app.screen.query_one(DataTable)
        row = 1 + table.header_height  # under the border and the header: the first row
        assert await pilot.click(table, offset=(2, row))
        await until(pilot, lambda: isinstance(app.screen, JoinCodeScreen))


async def test_the_quit_dialog_s_buttons() -> None:
    """No keeps playing, as n; Yes quits, as y."""
    async with running(fakes.mid_game()) as (app, pilot, _session):
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuitScreen)
        await click(pilot, "#quit-no")
        assert isinstance(app.screen, TableScreen)
        await pilot.press("q")
        await pilot.pause()
        await click(pilot, "#quit-yes")
        await until(pilot, lambda: app.return_code is not None or not app.is_running)


async def test_the_help_screen_closes_on_a_click() -> None:
    """The rules close on a click beside the page, as on ? or Esc."""
    async with running(fakes.mid_game()) as (app, pilot, _session):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await click(pilot, None)
        assert isinstance(app.screen, TableScreen)


async def test_the_final_screen_s_buttons() -> None:
    """Play again asks for the rematch (a); Table goes back (t); Lobby leaves."""
    async with running(fakes.ending()) as (app, pilot, session):
        assert isinstance(app.screen, FinalScreen)
        buttons = {str(b.label): b for b in app.screen.query(Button)}
        again = next(b for label, b in buttons.items() if "again" in label.lower())
        await click(pilot, again)
        assert ("play_again", (), {}) in session.requests
        table = next(b for label, b in buttons.items() if "table" in label.lower())
        await click(pilot, table)
        assert isinstance(app.screen, TableScreen)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, FinalScreen)
        lobby = next(b for b in app.screen.query(Button) if "lobby" in str(b.label).lower())
        await click(pilot, lobby)
        await until(pilot, lambda: ("leave", (), {}) in session.requests)


async def test_the_final_screen_s_replay_button_opens_the_replay() -> None:
    """Replay opens the replay viewer on this match, which asks for its events."""
    from client.tui.screens.replay import ReplayScreen

    answer = fakes.replay_pages(fakes.short_match(), match=fakes.MATCH)
    async with running(fakes.ending(), replay=answer) as (app, pilot, session):
        button = next(b for b in app.screen.query(Button) if "replay" in str(b.label).lower())
        await click(pilot, button)
        assert isinstance(app.screen, ReplayScreen)
        await until(pilot, lambda: any(kind == "replay" for kind, _a, _k in session.requests))


async def test_the_trust_dialog_s_buttons() -> None:
    """The certificate prompt: No answers False (trust nothing), Yes answers True."""
    for button, answer in (("#trust-no", False), ("#trust-yes", True)):
        async with running([]) as (app, pilot, _session):
            answers: list[bool | None] = []
            app.push_screen(TrustScreen("192.0.2.7:8765", FP), answers.append)
            await until(pilot, lambda: isinstance(app.screen, TrustScreen))
            await pilot.pause()  # composed
            await click(pilot, button)
            assert answers == [answer], button
            assert not isinstance(app.screen, TrustScreen)


def _key_cap(bar: KeyBar, label: str) -> tuple[int, int]:
    """Where the key cap whose words are ``label`` is clicked on the bar."""
    x = 0
    for key, description in bar.keys:
        cap = Text(f" {t(key)} ").cell_len
        if t(description) == label:
            return (x + 1, 0)
        x += cap + Text(f" {t(description)}  ").cell_len
    raise AssertionError(f"no key {label!r} on the bar")


async def test_the_key_bar_s_keys_are_clicked_like_keys() -> None:
    """At the table, a click on "? rules" opens the rules, on "m" the chat pane,
    and on "q quit" asks to quit: the bar's keys do what pressing them does."""
    i18n.set_language("en")
    async with running(fakes.mid_game()) as (app, pilot, _session):
        bar = app.screen.query_one(KeyBar)
        assert await pilot.click(bar, offset=_key_cap(bar, t("keys.help")))
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, TableScreen))
        assert await pilot.click(bar, offset=_key_cap(bar, t("keys.show_chat")))
        await until(pilot, lambda: app.table_screen.chatting)
        assert await pilot.click(bar, offset=_key_cap(bar, t("keys.quit")))
        await until(pilot, lambda: isinstance(app.screen, ConfirmQuitScreen))


def test_a_key_cap_for_two_keys_presses_none() -> None:
    """←/→ could be either: a click on it presses nothing; Esc and ? their keys."""
    assert key_press("keyname.arrows") is None
    assert key_press("keyname.escape") == "escape"
    assert key_press("keyname.help") == "question_mark"
    assert key_press("keyname.k") == "k"
