"""The tutorial's steps from what the server sends (no app, no server): what
each prompt and event queues, once, and the tie-breaker found in the final
bouquets (R21) or explained in general."""

from __future__ import annotations

import re

import msgspec

import protocol as wire
from client.tui.i18n import LANGUAGES, set_language, t
from client.tui.screens.tutorial import step_text
from client.tui.tutorial import STEPS, Tutorial, tie_breaker
from protocol.examples import PROMPT_4P, SCORING_3P, SNAPSHOT_4P

STATE = SNAPSHOT_4P.state
NAMES = {0: "Ada", 1: "Bot 2", 2: "Bot 3", 3: "Bot 4"}


def _first_card(
    drawn: wire.Card, rankings: tuple[wire.Colour, ...]
) -> tuple[wire.Prompt, wire.State]:
    """A turn's first card ``drawn``, its face-up add making ``rankings``."""
    state = msgspec.structs.replace(STATE, used=None, drawn=drawn)
    prompt = msgspec.structs.replace(
        PROMPT_4P,
        actions=(wire.Keep(), wire.Give(to_seat=0), wire.AddFaceUp(), wire.AddSecret()),
        points=(2, 5, 0, 0),
        rankings=(None, None, rankings, None),
    )
    return prompt, state


def _keys(tutorial: Tutorial) -> list[str]:
    keys = []
    while tutorial.current is not None:
        keys.append(tutorial.current.key)
        tutorial.next()
    return keys


def test_r8_a_first_card_that_ties_queues_the_turn_steps_with_the_tie() -> None:
    """Pink 3 brings pink to orange's 6: the tie goes above (R8), told after the face-up add."""
    prompt, state = _first_card("pink-3", ("purple", "pink", "orange", "blue"))
    tutorial = Tutorial()
    tutorial.prompt(prompt, state)
    assert tutorial.current is not None and tutorial.current.field_map()["card"] == "pink-3"
    keys = _keys(tutorial)
    assert keys == ["turn", "keep", "give", "face_up", "tie", "secret"]
    tie = tutorial.done[4].field_map()
    assert (tie["colour"], tie["total"], tie["other"], tie["rank"], tie["other_rank"]) == (
        "pink",
        6,
        "orange",
        1,
        2,
    )
    assert (
        tutorial.done[1].field_map()["points"] == 2 and tutorial.done[2].field_map()["points"] == 5
    )
    tutorial.prompt(prompt, state)  # each step once
    assert tutorial.current is None


def test_r8_no_tie_no_tie_step_until_one_comes() -> None:
    """Pink 4 passes orange without tying it: no tie step; a later prompt with a tie brings it."""
    prompt, state = _first_card("pink-4", ("purple", "pink", "orange", "blue"))
    tutorial = Tutorial()
    tutorial.prompt(prompt, state)
    assert "tie" not in _keys(tutorial)
    second = msgspec.structs.replace(STATE, drawn="pink-3")  # used: give, a second card
    tutorial.prompt(
        msgspec.structs.replace(
            PROMPT_4P, rankings=(None, ("purple", "pink", "orange", "blue"), None)
        ),
        second,
    )
    assert _keys(tutorial) == ["tie", "second"]
    assert tutorial.done[-1].field_map()["used"] == "give"


def test_r21_the_tie_breaker_is_found_in_the_final_bouquets() -> None:
    """Two seats with as many pink cards, told apart by value: that match's own case."""
    seats = (
        msgspec.structs.replace(STATE.seats[0], bouquet=("pink-4", "pink-4", "blue-2")),
        msgspec.structs.replace(STATE.seats[1], bouquet=("pink-2", "pink-3")),
        msgspec.structs.replace(STATE.seats[2], bouquet=("blue-3",)),
    )
    final = msgspec.structs.replace(STATE, seats=seats)
    scoring = msgspec.structs.replace(
        SCORING_3P,
        majorities=(
            wire.MajorityResult(
                colour="pink",
                rank=0,
                places=(
                    wire.MajorityPlace(seat=0, cards=2, value=8, place=0, points=15),
                    wire.MajorityPlace(seat=1, cards=2, value=5, place=1, points=10),
                ),
            ),
        ),
    )
    assert tie_breaker(scoring, final) == ("pink", 0, 1, 2, 8, 5)
    tutorial = Tutorial()
    tutorial.event(wire.MatchEnded(scoring=scoring), final, NAMES)
    assert _keys(tutorial) == ["majorities", "tiebreak", "end"]
    majorities, tiebreak, end = tutorial.done
    assert majorities.message == "tutorial.majorities_example"
    assert tiebreak.message == "tutorial.tiebreak_here"
    text = step_text(tiebreak).plain
    assert "Ada" in text and "Bot 2" in text and "8" in text and "5" in text
    assert end.message == "tutorial.end" and end.rule == "R23"


def test_r21_without_such_a_tie_the_rule_is_told_in_general() -> None:
    """No majority decided by value: the general text."""
    lonely = msgspec.structs.replace(SCORING_3P, majorities=())
    assert tie_breaker(lonely, STATE) is None
    tutorial = Tutorial()
    tutorial.event(wire.MatchEnded(scoring=lonely), STATE, NAMES)
    _keys(tutorial)
    assert [step.message for step in tutorial.done] == [
        "tutorial.majorities",
        "tutorial.tiebreak",
        "tutorial.end",
    ]


def test_every_step_names_its_rule() -> None:
    """Each step of the list names one or more rules, R-numbers."""
    for key, rule in STEPS:
        assert all(part.startswith("R") and part[1:].isdigit() for part in rule.split(" · ")), key


def test_the_rules_in_brief_name_every_rule_a_note_names() -> None:
    """A note points to ?: the page it opens names each of the note's rules, in every language."""
    for lang in LANGUAGES:
        set_language(lang)
        page = t("help.rules", keep="0/0/1/2", reveal=5)
        for key, rule in STEPS:
            for number in rule.split(" · "):
                assert re.search(rf"\b{number}\b", page), (lang, key, number)
