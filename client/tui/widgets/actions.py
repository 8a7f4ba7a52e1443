"""The action panel: what you are asked now, the card you drew, and your
legal actions as buttons — each with its key and the points it would score.

Pressing a button runs ``app.choose(key)``, the same action its key runs, so
the mouse and the keyboard take one path."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Button, Static

from ..cards import card_text, cards_text, colour_tag
from ..i18n import rich, t, tn
from ..viewmodel import ActionsView, Choice, HintValue, RankMove

__all__ = ["ActionsPanel"]


def _points(points: int | None) -> Text:
    if points is None:
        return Text()
    return Text("  " + t("actions.points", points=points), style="bold green" if points else "dim")


def _rank(rank: int | None) -> str:
    return t("rank.none") if rank is None else t(f"rank.{rank + 1}")


def ranking_text(move: RankMove | None) -> Text:
    """``  ♥ → 2nd`` (``  ♥ stays 4th``): where a face-up add puts the colour
    (R8), or nothing."""
    if move is None:
        return Text()
    colour = colour_tag(move.colour)
    if move.before == move.after:
        text = rich("actions.ranking_same", colour=colour, rank=_rank(move.after))
    else:
        text = rich("actions.ranking", colour=colour, after=_rank(move.after))
    return Text("  ") + text


def hint_text(hint: HintValue | None) -> Text:
    """``  ≈48.2★``: a hint's expected final points for a choice, the best starred."""
    if hint is None:
        return Text()
    text = Text(f"  ≈{hint.points:.1f}", style="cyan")
    if hint.best:
        text.append("★", style="bold yellow")
    return text


def choice_label(choice: Choice) -> Text:
    """``k  Keep  +2``: the key, what it does, what it scores (and for a
    face-up add, where it puts the colour: ``♥ → 2nd``)."""
    key = t(f"keyname.{choice.key}") if not choice.key.isdigit() else choice.key
    label = Text.assemble((f" {key} ", "bold reverse"), " ")
    if choice.card is not None and choice.other is not None:
        label.append_text(
            rich(choice.label, card=card_text(choice.card), other=card_text(choice.other))
        )
    elif choice.name is not None:
        label.append_text(rich(choice.label, name=Text(choice.name, style="bold")))
    else:
        label.append(t(choice.label))
    if choice.hint is not None:  # the hint's expected final points say more than this turn's
        return label + hint_text(choice.hint)
    if choice.ranking is not None and not choice.points:
        # an add scores nothing (R16): its ranking says more in the room left
        return label + ranking_text(choice.ranking)
    return label + _points(choice.points) + ranking_text(choice.ranking)


def _waiting(names: tuple[str, ...], timer: int | None = None) -> Text:
    if not names:
        return Text(t("actions.waiting_anyone"), style="dim")
    text = rich("actions.waiting", style="dim", names=Text(", ".join(names), style="bold"))
    if timer is not None:  # everyone sees everyone's timer
        text.append("  " + t("actions.timer", seconds=timer), style="bold")
    return text


def _hint_line(view: ActionsView, before: str) -> Text:
    """While a hint is computed, "thinking…"; once shown, what its numbers are."""
    if view.thinking:
        return Text(before + t("actions.hint_thinking"), style="italic cyan")
    if view.hinted:
        return Text(before + t("actions.hint_shown"), style="dim cyan")
    return Text()


def prompt_text(view: ActionsView) -> Text:
    """The sentence at the top of the panel."""
    mode = view.mode
    if mode == "waiting_room":
        text = rich(
            "actions.waiting_room", number=view.seats, taken=view.seats_taken, seats=view.seats
        )
        text.append("\n")
        if view.missing:
            names = Text(", ".join(view.missing), style="bold")
            text.append_text(rich("actions.not_here", style="dim", names=names))
            text.append("\n")
        if view.not_accepted:
            names = Text(", ".join(view.not_accepted), style="bold")
            text.append_text(rich("actions.not_accepted", style="dim", names=names))
            text.append("\n")
        if view.spectators:
            count = view.spectators
            text.append(tn("actions.spectators", count, count=count) + "\n", style="dim")
        if view.open_box:
            text.append(t("actions.open_box") + "\n", style="italic")
        if view.hints:  # a match with hints is never rated
            text.append(t("actions.hints_allowed_unrated") + "\n", style="italic cyan")
        else:
            said = "actions.rated" if view.rated else "actions.unrated"
            text.append(t(said) + "\n", style="italic")
        if view.join_code is not None:
            code = Text(view.join_code, style="bold reverse")
            text.append_text(rich("actions.join_code", code=code))
            text.append("\n")
        if any(choice.key == "s" for choice in view.choices) and not view.not_accepted:
            text.append(t("actions.host_start"), style="dim")
        elif view.host:
            text.append(t("actions.host_wait"), style="dim")
        else:  # tell a guest whom they wait for
            host = Text(view.host_name, style="bold")
            full = view.seats_taken == view.seats and not view.missing
            text.append_text(
                rich("actions.guest_wait_start" if full else "actions.guest_wait", host=host)
            )
        return text
    if mode == "opening":
        return Text(t("actions.opening"), style="bold") + _hint_line(view, "\n")
    if mode == "opening_done":
        text = Text()
        if len(view.hand) == 2:
            text = rich(
                "actions.opening_done",
                bouquet=card_text(view.hand[0]),
                secret=card_text(view.hand[1]),
            )
            text.append("\n")
        return text + _waiting(view.waiting_for, view.timer)
    if mode in ("turn", "give"):
        text = rich(
            "actions.second_card" if view.second_card else "actions.first_card", style="bold yellow"
        )
        text.append("  ")
        if view.drawn is not None:
            text.append_text(card_text(view.drawn, big=True))
        if view.deck is not None:
            text.append("  ")
            text.append(tn("actions.deck", view.deck, count=view.deck), style="dim")
        if mode == "give" and view.drawn is not None:
            text.append("\n")
            text.append_text(rich("actions.give_whom", card=card_text(view.drawn)))
        text.append_text(_hint_line(view, "\n"))
        if view.last_turn:
            return Text(t("actions.last_turn") + "\n", style="bold magenta") + text
        return text
    if mode == "acting":
        return Text(t("actions.sending"), style="dim")
    if mode == "offline":
        return Text(t("actions.offline"), style="bold red")
    if mode == "watch":
        return Text(t("actions.watching") + "\n", style="italic") + _waiting(
            view.waiting_for, view.timer
        )
    if mode == "reveal":
        return rich("actions.reveal", style="bold", cards=cards_text(view.revealed))
    if mode == "over":
        return Text(t("actions.over"), style="bold")
    if mode == "connecting":
        return Text(t("actions.connecting"), style="dim")
    return _waiting(view.waiting_for, view.timer)


class ActionsPanel(Vertical):
    """Renders an :class:`~client.tui.viewmodel.ActionsView` (rebuilt when it changes)."""

    view: reactive[ActionsView] = reactive(ActionsView(mode="connecting"), recompose=True)
    seconds_left: reactive[int | None] = reactive(None)

    def compose(self) -> ComposeResult:
        view = self.view
        if view.mode in ("reveal", "over"):
            self.border_title = t("actions.title_over")
        elif view.mode == "watch":
            self.border_title = t("actions.title_watch")
        else:
            self.border_title = t("actions.title")
        yield Static(prompt_text(view), classes="prompt")
        for choice in view.choices:
            yield Button(
                choice_label(choice),
                action=f"app.choose('{choice.key}')",
                compact=True,
                classes="choice",
            )
        timer = Static(self._timer(), classes="timer")
        timer.display = self.seconds_left is not None
        yield timer

    def _timer(self) -> Text:
        if self.seconds_left is None:
            return Text()
        return Text(t("actions.timer", seconds=self.seconds_left), style="bold")

    def watch_seconds_left(self) -> None:
        for timer in self.query(".timer").results(Static):
            timer.display = self.seconds_left is not None
            timer.update(self._timer())
