"""Golden playthroughs: seeded bot matches rendered as every seat saw them
(engine.tools.playthrough), diffed against the committed text in golden/.

A rules change shows up as a readable diff, a leaked card (R24–R26) as a
one-line one. After an intended change, regenerate and review the diff.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from engine.tools.playthrough import (
    GOLDEN_CASES,
    REGENERATE,
    golden_dir,
    golden_name,
    main,
    render_playthrough,
)

GOLDEN = Path(__file__).parent / "golden"
MAX_DIFF_LINES = 200
IDS = [f"{players}p-seed{seed}" for players, seed in GOLDEN_CASES]


@pytest.mark.parametrize(("players", "seed"), GOLDEN_CASES, ids=IDS)
def test_playthrough_matches_golden_file(players: int, seed: int) -> None:
    """A freshly rendered playthrough is exactly the committed golden file."""
    path = GOLDEN / golden_name(players, seed)
    if not path.exists():
        pytest.fail(f"{path} is missing; create it with: {REGENERATE}")
    expected = path.read_text(encoding="utf-8")
    actual = render_playthrough(players, seed)
    if actual != expected:
        diff = list(
            difflib.unified_diff(
                expected.splitlines(),
                actual.splitlines(),
                fromfile=f"golden/{path.name}",
                tofile="rendered now",
                lineterm="",
            )
        )
        shown = "\n".join(diff[:MAX_DIFF_LINES])
        more = (
            f"\n... {len(diff) - MAX_DIFF_LINES} more diff lines"
            if len(diff) > MAX_DIFF_LINES
            else ""
        )
        pytest.fail(
            f"playthrough {players}p seed {seed} differs from {path}:\n{shown}{more}\n\n"
            f"If the change is intended, regenerate the golden files and review the diff:\n"
            f"  {REGENERATE}",
            pytrace=False,
        )


def test_golden_dir_holds_exactly_the_golden_cases() -> None:
    """Every golden file belongs to a case in GOLDEN_CASES and the other way round."""
    assert golden_dir() == GOLDEN.resolve()
    expected = {golden_name(players, seed) for players, seed in GOLDEN_CASES}
    assert {path.name for path in GOLDEN.glob("*.txt")} == expected
    assert {players for players, _ in GOLDEN_CASES} >= {2, 3, 5}


def test_rendering_is_deterministic() -> None:
    """Rendering the same match twice gives the same text (no hidden global state)."""
    assert render_playthrough(2, 3, first_seat=1) == render_playthrough(2, 3, first_seat=1)


CARD = re.compile(r"\b(?:purple|blue|pink|orange)-[234]\b")
VIEWER_LINE = re.compile(r"^  \[(seat (\d)|spectator)\] seat (\d) ")


@pytest.mark.parametrize(("players", "seed"), GOLDEN_CASES, ids=IDS)
def test_r25_golden_lines_show_private_cards_only_to_their_owner(players: int, seed: int) -> None:
    """An event line shown to one viewer names a card only if the event is that viewer's."""
    checked = 0
    for line in (GOLDEN / golden_name(players, seed)).read_text(encoding="utf-8").splitlines():
        found = VIEWER_LINE.match(line)
        if found is None:
            continue
        viewer, actor = found.group(2), found.group(3)
        if viewer != actor:
            checked += 1
            assert not CARD.search(line), f"a private card leaks: {line!r}"
    assert checked > 0


def test_main_prints_a_playthrough(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m engine.tools.playthrough --players 2 --seed 4` prints that playthrough."""
    assert main(["--players", "2", "--seed", "4", "--first-seat", "1"]) == 0
    assert capsys.readouterr().out == render_playthrough(2, 4, first_seat=1)


def test_main_regenerate_writes_every_golden_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--regenerate` writes one file per golden case, each a fresh rendering."""
    assert main(["--regenerate", "--golden-dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    for players, seed in GOLDEN_CASES:
        name = golden_name(players, seed)
        assert (tmp_path / name).read_text(encoding="utf-8") == render_playthrough(players, seed)
        assert str(tmp_path / name) in printed


def test_main_refuses_a_first_seat_outside_the_match() -> None:
    """A first seat that is not a seat of the match is an argument error."""
    with pytest.raises(SystemExit):
        main(["--players", "2", "--first-seat", "2"])
