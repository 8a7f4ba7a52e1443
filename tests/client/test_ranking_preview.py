"""The face-up add's ranking preview (``prompt.rankings``, R8) and the deck
count, from the prompt to the words beside the option: looked up by action,
never trusted when misaligned, and said in every language."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest

import protocol as wire
from client.options import rankings_by_action
from client.tui import i18n
from client.tui.viewmodel import RankMove, actions_view
from client.tui.widgets.actions import choice_label, prompt_text
from protocol import examples

PROMPT = examples.PROMPT_4P  # seat 1's pink 4: face up, pink 4th → 2nd (R8)
STATE = examples.SNAPSHOT_4P.state


def test_rankings_are_looked_up_by_action() -> None:
    """rankings[i] belongs to actions[i]; the actions without one are left out."""
    assert rankings_by_action(PROMPT) == {wire.AddFaceUp(): ("purple", "pink", "orange", "blue")}
    assert rankings_by_action(None) == {}


def test_rankings_that_do_not_line_up_are_not_trusted() -> None:
    """None sent (an older server) or a different count: no preview at all."""
    for rankings in ((), (None, ("pink",))):
        prompt = msgspec.structs.replace(PROMPT, rankings=rankings)
        assert rankings_by_action(prompt) == {}


def _choices(rankings: dict[wire.Action, tuple[wire.Colour, ...]]) -> dict[str, RankMove | None]:
    view = actions_view(STATE, None, 1, rankings=rankings)
    return {choice.key: choice.ranking for choice in view.choices}


def test_r8_the_add_face_up_choice_carries_the_colour_s_move() -> None:
    """Pink, 4th now, would be 2nd; the other choices carry nothing."""
    moves = _choices(dict(rankings_by_action(PROMPT)))
    assert moves == {"k": None, "f": RankMove("pink", 3, 1), "s": None}


def test_no_preview_without_rankings() -> None:
    """The view never works R8 out itself: without the server's word, nothing."""
    assert _choices({})["f"] is None


@pytest.mark.parametrize(
    ("lang", "moved", "stays"),
    [("en", "♥ → 2nd", "♥ stays 4th"), ("de", "♥ → 2.", "♥ bleibt 4."), ("es", "♥→2.º", "♥=4.º")],
)
def test_the_label_says_the_new_rank_in_each_language(lang: str, moved: str, stays: str) -> None:
    """The move replaces the add's "+0"; an unchanged rank says so."""
    i18n.set_language(lang)
    try:
        (face_up,) = [
            c
            for c in actions_view(STATE, None, 1, rankings=dict(rankings_by_action(PROMPT))).choices
            if c.key == "f"
        ]
        label = choice_label(face_up).plain
        assert label.endswith("  " + moved) and "+0" not in label, label
        same = dataclasses.replace(face_up, ranking=RankMove("pink", 3, 3))
        assert choice_label(same).plain.endswith("  " + stays)
    finally:
        i18n.set_language("en")


def test_r18_the_deck_count_is_shown_while_placing_a_card() -> None:
    """The cards left to draw, beside the card to place (how long is left)."""
    view = actions_view(STATE, None, 1)
    assert view.deck == 28
    assert "deck: 28 cards" in prompt_text(view).plain
    assert actions_view(STATE, None, 0).deck is None  # not your turn: not there
