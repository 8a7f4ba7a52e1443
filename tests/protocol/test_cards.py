"""Card spellings are taken apart in one place: protocol.cards."""

from __future__ import annotations

import pytest

import protocol as wire
from protocol.cards import CARD_PARTS


def test_every_spelling_has_its_colour_and_value() -> None:
    """R1–R2: the twelve spellings, each a colour and a value 2–4."""
    assert set(CARD_PARTS) == set(wire.CARDS)
    assert {(p.colour, p.value) for p in CARD_PARTS.values()} == {
        (colour, value) for colour in wire.COLOURS for value in (2, 3, 4)
    }
    assert wire.card_parts("pink-3") == wire.CardParts("pink", 3)
    assert wire.card_colour("orange-4") == "orange"
    assert wire.card_value("purple-2") == 2


@pytest.mark.parametrize("bad", ["pink-5", "green-3", "pink", "", "pink-3 ", ["pink-3"]])
def test_anything_else_is_refused_by_name(bad: object) -> None:
    """Not a spelling: a ValueError that quotes what was given."""
    with pytest.raises(ValueError, match="not a card spelling") as info:
        wire.card_parts(bad)  # type: ignore[arg-type]
    assert repr(bad) in str(info.value)
