"""A post-game analysis and a hint, as the screens show them — from what the
server sent alone: the client knows no rule, so an option is named from its
action (keep, give to a seat, add face up or face down, an opening's cards)
and every value, mark and summary is the server's.

:class:`Analysis` holds one seat's ``analysis`` and answers the replay
viewer's questions: which decision is at a position of the replay (a
decision's ``seq`` is the event its prompt followed, so the table after event
``seq`` is the one the seat decided on), where the next and previous marked
decisions are, and which decisions to learn from, costliest first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

import protocol as wire
from protocol.types import MARKS

from .cards import card_text
from .i18n import rich, t
from .viewmodel import HintValue

__all__ = [
    "MARK_SIGNS",
    "MARK_STYLES",
    "Analyses",
    "Analysis",
    "HintValue",
    "decision_heading",
    "decision_table",
    "drew_text",
    "hint_values",
    "mark_text",
    "option_label",
    "progress_text",
    "summary_text",
    "timeline",
    "verdict_text",
]

#: Each mark as Lichess writes it after a move.
MARK_SIGNS: dict[wire.Mark, str] = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
MARK_STYLES: dict[wire.Mark, str] = {
    "inaccuracy": "bold #e6c229",
    "mistake": "bold #ff8c1a",
    "blunder": "bold #ff4d4d",
}


class Analyses(Protocol):
    """What the replay viewer needs of a session for an analysis."""

    async def analyse(
        self,
        match: str,
        *,
        seat: int | None = None,
        join_code: str | None = None,
        progress: Callable[[wire.AnalysisProgress], object] | None = None,
    ) -> wire.AnalysisReport: ...


def mark_text(mark: wire.Mark | None, *, word: bool = False) -> Text:
    """``??`` in the mark's colour (``word``: and its name: ``?? blunder``)."""
    if mark is None:
        return Text()
    text = Text(MARK_SIGNS[mark], style=MARK_STYLES[mark])
    if word:
        text.append(" " + t(f"analysis.mark.{mark}"), style=MARK_STYLES[mark])
    return text


def option_label(
    action: wire.Action, names: Mapping[int, str], options: Sequence[wire.Action] = ()
) -> Text:
    """An option in words, from the action alone (``options``: the decision's
    other options, which name an opening's card for the bouquet)."""
    if isinstance(action, wire.Keep):
        return Text(t("choice.keep"))
    if isinstance(action, wire.Give):
        name = names.get(action.to_seat, t("seat.numbered", n=action.to_seat + 1))
        return rich("choice.give_to", name=Text(name, style="bold"))
    if isinstance(action, wire.AddFaceUp):
        return Text(t("choice.add_face_up"))
    if isinstance(action, wire.AddSecret):
        return Text(t("choice.add_secret"))
    other = next(
        (o.secret for o in options if isinstance(o, wire.Opening) and o.secret != action.secret),
        action.secret,
    )
    return rich("choice.opening", card=card_text(action.secret), other=card_text(other))


def _points(value: float) -> str:
    return f"{value:.1f}"


def _chance(value: float) -> str:
    return f"{round(value * 100)}%"


def decision_table(
    decision: wire.DecisionReview,
    names: Mapping[int, str],
    *,
    chosen: int | None = None,
) -> Table:
    """The options of ``decision``: what each was worth (expected final points,
    win chance), the one taken (▸; ``chosen``: another choice, as in a lesson)
    and the best (★)."""
    taken = decision.chosen if chosen is None else chosen
    actions = [o.action for o in decision.options]
    table = Table(box=None, padding=(0, 1, 0, 0), show_edge=False, header_style="dim")
    table.add_column("", no_wrap=True, width=2)
    table.add_column(t("analysis.option"), ratio=1, overflow="fold")
    table.add_column(t("analysis.points"), justify="right", no_wrap=True)
    table.add_column(t("analysis.win"), justify="right", no_wrap=True)
    for index, option in enumerate(decision.options):
        marker = Text("▸" if index == taken else " ", style="bold")
        marker.append("★" if index == decision.best else " ", style="bold yellow")
        style = "bold" if index == taken else ""
        table.add_row(
            marker,
            option_label(option.action, names, actions),
            _points(option.expected_points),
            _chance(option.win_chance),
            style=style,
        )
    return table


def summary_text(report: wire.AnalysisReport, name: str, *, you: bool) -> Text:
    """One player's summary: accuracy, mean loss and the marks' counts."""
    who = t("who.you") if you else name
    text = rich(
        "analysis.summary",
        who=Text(who, style="bold"),
        accuracy=f"{report.accuracy:.0f}",
        loss=f"{report.mean_loss:.1f}",
    )
    for mark, count in zip(
        MARKS, (report.inaccuracies, report.mistakes, report.blunders), strict=True
    ):
        text.append("  ")
        text.append_text(mark_text(mark))
        text.append(f" {count}")
    return text


def timeline(analysis: Analysis, current: wire.DecisionReview | None) -> Text:
    """Every decision in play order as one cell: a dot, or the mark's colour
    (▲ the current one)."""
    text = Text()
    for decision in analysis.decisions:
        glyph = "▲" if decision is current else "•" if decision.mark else "·"
        style = MARK_STYLES[decision.mark] if decision.mark else "dim"
        text.append(glyph, style=style + (" reverse" if decision is current else ""))
    return text


def progress_text(progress: wire.AnalysisProgress | None) -> Text:
    """Where an analysis is: asked, waiting behind others, or decision n of N."""
    if progress is None:
        return Text(t("analysis.asking"), style="italic")
    if progress.queued:
        return Text(t("analysis.queued", count=progress.queued), style="italic")
    if not progress.total:
        return Text(t("analysis.starting"), style="italic")
    width = 20
    filled = round(width * progress.done / progress.total)
    text = Text(t("analysis.computing", done=progress.done, total=progress.total), style="italic")
    text.append("\n")
    text.append("█" * filled, style="green")
    text.append("░" * (width - filled), style="dim")
    return text


class Analysis:
    """One seat's analysis, placed on the replay's positions."""

    def __init__(self, report: wire.AnalysisReport) -> None:
        self.report = report
        self.decisions = tuple(sorted(report.decisions, key=lambda d: d.seq))
        self.by_index = {d.index: d for d in report.decisions}

    @property
    def seat(self) -> int:
        """The seat analysed."""
        return self.report.seat

    @property
    def costliest(self) -> tuple[wire.DecisionReview, ...]:
        """The (at most three) decisions that lost most, costliest first."""
        return tuple(self.by_index[i] for i in self.report.costliest if i in self.by_index)

    def at(self, position: int) -> wire.DecisionReview | None:
        """The decision the table at ``position`` leads to: the seat's next
        one from there in the same turn (its moment is ``seq``), else the last
        one before it — None before the seat's first decision."""
        before = [d for d in self.decisions if d.seq <= position]
        after = [d for d in self.decisions if d.seq >= position]
        if after and after[0].seq == position:
            return after[0]
        return before[-1] if before else None

    def marked(self) -> tuple[wire.DecisionReview, ...]:
        """The decisions that earned a mark, in play order."""
        return tuple(d for d in self.decisions if d.mark is not None)

    def next_marked(self, position: int, direction: int) -> wire.DecisionReview | None:
        """The next (``direction`` 1) or previous (-1) marked decision from ``position``."""
        marked = self.marked()
        if direction > 0:
            return next((d for d in marked if d.seq > position), None)
        return next((d for d in reversed(marked) if d.seq < position), None)

    def lessons(self) -> tuple[wire.DecisionReview, ...]:
        """The decisions to choose again: every marked one, costliest first
        (or, when none is marked, those that lost anything)."""
        chosen = self.marked() or tuple(d for d in self.decisions if d.loss > 0 and not d.forced)
        return tuple(sorted(chosen, key=lambda d: (-d.loss, d.seq)))


def hint_values(
    prompt: wire.Prompt | None, hint: wire.HintValues | None
) -> dict[wire.Action, HintValue]:
    """A hint's values by action, when it is for ``prompt``'s decision
    (``options[i]`` values the prompt's ``actions[i]``); else none."""
    if prompt is None or hint is None or hint.seq != prompt.seq:
        return {}
    if len(hint.options) != len(prompt.actions):
        return {}
    return {
        action: HintValue(option.expected_points, option.win_chance, index == hint.best)
        for index, (action, option) in enumerate(zip(prompt.actions, hint.options, strict=True))
    }


def drew_text(card: wire.Card, names: Mapping[int, str], seat: int, *, you: bool) -> Text:
    """``you drew ♥3`` (``Bob drew ♥3``): the card the seat had drawn."""
    if you:
        return rich("analysis.drew_you", card=card_text(card))
    name = names.get(seat, t("seat.numbered", n=seat + 1))
    return rich("analysis.drew", name=Text(name, style="bold"), card=card_text(card))


def decision_heading(
    decision: wire.DecisionReview, names: Mapping[int, str], seat: int, *, you: bool
) -> Text:
    """``Turn 5 · you drew ♥3 · ?? blunder −6.2``: the decision in a line."""
    text = Text(
        t("analysis.turn", turn=decision.turn) if decision.turn else t("table.opening"),
        style="bold",
    )
    if decision.drawn is not None:
        text.append(" · ")
        text.append_text(drew_text(decision.drawn, names, seat, you=you))
    if decision.forced:
        text.append(" · " + t("analysis.forced"), style="dim")
    elif decision.mark is not None:
        text.append(" · ")
        text.append_text(mark_text(decision.mark, word=True))
        text.append(" " + t("analysis.loss", loss=_points(decision.loss)))
    elif decision.loss > 0:
        text.append(" · " + t("analysis.loss", loss=_points(decision.loss)), style="dim")
    else:
        text.append(" · " + t("analysis.best_taken"), style="green")
    return text


def verdict_text(
    decision: wire.DecisionReview, chosen: int, names: Mapping[int, str]
) -> RenderableType:
    """A lesson's answer: the new choice's value against the best, and what
    was chosen in the match."""
    actions = [o.action for o in decision.options]
    best = decision.options[decision.best]
    mine = decision.options[chosen]
    lines: list[RenderableType] = []
    if chosen == decision.best:
        lines.append(Text(t("learn.right"), style="bold green"))
    else:
        loss = _points(best.expected_points - mine.expected_points)
        lines.append(Text(t("learn.wrong", loss=loss), style="bold #ff8c1a"))
    line = rich(
        "learn.yours",
        option=option_label(mine.action, names, actions),
        points=_points(mine.expected_points),
        chance=_chance(mine.win_chance),
    )
    lines.append(line)
    if chosen != decision.best:
        lines.append(
            rich(
                "learn.best",
                option=option_label(best.action, names, actions),
                points=_points(best.expected_points),
                chance=_chance(best.win_chance),
            )
        )
    then = decision.options[decision.chosen]
    lines.append(
        rich(
            "learn.then",
            style="dim",
            option=option_label(then.action, names, actions),
            points=_points(then.expected_points),
        )
    )
    return Group(*lines)
