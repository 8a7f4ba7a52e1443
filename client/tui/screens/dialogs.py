"""The small dialogs: a new match's settings, a private match's join code, a
chat line, and "quit while a match is running?". Each has a button for each
of its keys (Enter, Esc), so a finger on a phone's screen can answer it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from protocol import STRENGTHS
from protocol.limits import MAX_NAME_LENGTH

from ..i18n import t, tn

__all__ = [
    "ChatScreen",
    "ConfirmQuitScreen",
    "CreateMatchScreen",
    "CreateSettings",
    "JoinCodeScreen",
    "PickScreen",
    "Tick",
    "first_seat_options",
]

TIMERS = (0, 30, 60, 120, 300)
CHANCE = -1  # the first-player choice that leaves it to chance (R12)


@dataclass(frozen=True, slots=True)
class CreateSettings:
    """A new match as the host asked for it. Bots take the highest seats."""

    name: str
    seats: int = 4
    bots: int = 3
    strength: str = "medium"
    join_code: str | None = None
    turn_timer: float | None = None
    first_seat: int | None = None  # R12: who plays first; None: chance
    #: R27: once finished, the server publishes the seed and every action
    open_box: bool = False
    #: the ruleset (R30) by the name the server offers it; None: the printed rules
    ruleset: str | None = None
    #: whether it changes ratings; None: the server's rule (rated with the printed
    #: rules and a closed box)
    rated: bool | None = None
    #: players may ask for hints (issue 32); such a match is unrated
    hints: bool = False

    @property
    def bot_seats(self) -> list[tuple[int, str]]:
        """(seat, strength) for every bot."""
        return [(seat, self.strength) for seat in range(self.seats - self.bots, self.seats)]


class Tick(Checkbox):
    """A checkbox whose mark is a tick, not a letter (the form is in any language);
    its label wraps where the stylesheet lets it (a phone's narrow form)."""

    BUTTON_INNER = "✓"

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line, or as many as the wrapped label takes."""
        if self.styles.text_wrap != "wrap":
            return 1
        return max(1, len(self.render().wrap(max(1, width - 2))))


def _printable(text: str) -> bool:
    return text.isprintable()


def bot_count_options(seats: int) -> list[tuple[str, int]]:
    """How many bots a match of ``seats`` seats may have: they always leave
    the host a seat (a table of bots only would be over before one could watch)."""
    return [(str(n), n) for n in range(0, seats)]


def first_seat_options(seats: int, bots: int) -> list[tuple[str, int]]:
    """The first-player choices for ``seats`` seats of which the highest
    ``bots`` are bots: chance, then each seat (the host sits in the first
    seat no bot has)."""
    humans = seats - bots
    options = [(t("create.first_chance"), CHANCE)]
    for seat in range(seats):
        if seat >= humans:
            label = t("seat.bot", n=seat + 1)
        elif seat == 0:
            label = t("create.first_you", n=seat + 1)
        else:
            label = t("seat.numbered", n=seat + 1)
        options.append((label, seat))
    return options


class CreateMatchScreen(ModalScreen[CreateSettings | None]):
    """A small form; Enter creates, Escape cancels."""

    BINDINGS = [
        Binding("escape", "cancel", show=False),
        Binding("ctrl+s", "create", show=False),
    ]

    def __init__(
        self, default_name: str, rulesets: Sequence[str] = (), ruleset: str | None = None
    ) -> None:
        """``rulesets``: the names the server offers (a choice only if more than
        one); ``ruleset``: the one chosen at first, if offered."""
        super().__init__()
        self.default_name = default_name
        self.rulesets = tuple(rulesets)
        self.ruleset = ruleset if ruleset in self.rulesets else None
        #: the server's rule for the settings chosen: rated with the printed
        #: rules and a closed box (the rated tick follows it until the host
        #: ticks it otherwise)
        self._rule = self.ruleset in (None, "standard")

    def compose(self) -> ComposeResult:
        with Vertical(id="create", classes="dialog"):
            with Grid(id="create-form"):
                yield Label(t("create.name"))
                yield Input(self.default_name, id="name", max_length=MAX_NAME_LENGTH, compact=True)
                yield Label(t("create.seats"))
                yield Select(
                    [(str(n), n) for n in range(2, 7)],
                    value=4, allow_blank=False, id="seats", compact=True,
                )  # fmt: skip
                yield Label(t("create.bots"))
                yield Select(
                    bot_count_options(4),
                    value=3, allow_blank=False, id="bots", compact=True,
                )  # fmt: skip
                yield Label(t("create.strength"))
                yield Select(
                    [(t(f"strength.{s}"), s) for s in STRENGTHS],
                    value="medium", allow_blank=False, id="strength", compact=True,
                )  # fmt: skip
                yield Label(t("create.code"))
                yield Input(
                    placeholder=t("create.code_hint"),
                    id="code",
                    max_length=MAX_NAME_LENGTH,
                    compact=True,
                )
                yield Label(t("create.timer"))
                yield Select(
                    [
                        (t("create.no_timer") if s == 0 else t("lobby.timer", seconds=s), s)
                        for s in TIMERS
                    ],
                    value=0, allow_blank=False, id="timer", compact=True,
                )  # fmt: skip
                yield Label(t("create.first"))
                yield Select(
                    first_seat_options(4, 3),
                    value=CHANCE, allow_blank=False, id="first", compact=True,
                )  # fmt: skip
                yield Label(t("create.open_box"))
                yield Tick(t("create.open_box_hint"), id="open-box", compact=True)
                yield Label(t("create.rated"))
                yield Tick(t("create.rated_hint"), self._rule, id="rated", compact=True)
                yield Label(t("create.hints"))
                yield Tick(t("create.hints_hint"), id="hints", compact=True)
                if len(self.rulesets) > 1:
                    yield Label(t("create.ruleset"))
                    yield Select(
                        [(name, name) for name in self.rulesets],
                        value=self.ruleset or self.rulesets[0],
                        allow_blank=False, id="ruleset", compact=True,
                    )  # fmt: skip
            yield Static(id="create-error")
            with Horizontal(classes="buttons"):
                yield Button(t("create.create"), id="create-ok", variant="primary", compact=True)
                yield Button(t("create.cancel"), id="create-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#create").border_title = t("create.title")
        # the rows keep within 24 lines: no padding, and with a ruleset to choose no gaps
        self.query_one("#create").styles.padding = (0, 2)
        if len(self.rulesets) > 1:
            self.query_one("#create-form").add_class("-rows-close")
        self.query_one("#name", Input).focus()

    def _settings(self) -> CreateSettings | str:
        name = self.query_one("#name", Input).value.strip()
        code = self.query_one("#code", Input).value.strip()
        seats = int(self.query_one("#seats", Select).value)  # type: ignore[arg-type]
        bots = int(self.query_one("#bots", Select).value)  # type: ignore[arg-type]
        strength = str(self.query_one("#strength", Select).value)
        timer = int(self.query_one("#timer", Select).value)  # type: ignore[arg-type]
        first = int(self.query_one("#first", Select).value)  # type: ignore[arg-type]
        if not name or not _printable(name):
            return t("create.bad_name")
        if code and not _printable(code):
            return t("create.bad_code")
        if bots > seats:
            return tn("create.too_many_bots", seats, seats=seats)
        if first >= seats:
            return t("create.bad_first", seats=seats)
        return CreateSettings(
            name=name,
            seats=seats,
            bots=bots,
            strength=strength,
            join_code=code or None,
            turn_timer=float(timer) if timer else None,
            first_seat=None if first == CHANCE else first,
            open_box=self.query_one("#open-box", Tick).value,
            ruleset=self._ruleset(),
            rated=self._rated(),
            hints=self.query_one("#hints", Tick).value,
        )

    def _rated(self) -> bool | None:
        """The host's choice, or None where it is the server's rule."""
        rated = self.query_one("#rated", Tick).value
        return None if rated == self._rule else rated

    def on_checkbox_changed(self, event: Tick.Changed) -> None:
        """Open box or hints ticked or not: the rated tick follows the server's
        rule, unless the host set it otherwise; hints are never rated."""
        if event.checkbox.id in ("open-box", "hints"):
            self._follow_rule()

    def _follow_rule(self) -> None:
        hints = self.query_one("#hints", Tick).value
        rule = self._ruleset() is None and not self.query_one("#open-box", Tick).value
        rated = self.query_one("#rated", Tick)
        if rated.value == self._rule or (hints and rated.value):
            rated.value = rule and not hints
        rated.disabled = hints
        self._rule = rule and not hints

    def _ruleset(self) -> str | None:
        if len(self.rulesets) <= 1:
            return None
        chosen = str(self.query_one("#ruleset", Select).value)
        return None if chosen == "standard" else chosen

    def on_select_changed(self, event: Select.Changed) -> None:
        """Seats or bots changed: bots that leave the host a seat (fewer seats,
        fewer bots), and the seats there are now as first player. The ruleset
        changed: the rated tick follows the server's rule."""
        if event.select.id == "ruleset":
            self._follow_rule()
        if event.select.id not in ("seats", "bots"):
            return
        seats = int(self.query_one("#seats", Select).value)  # type: ignore[arg-type]
        count = self.query_one("#bots", Select)
        bots = min(int(count.value), seats - 1)  # type: ignore[arg-type]
        if event.select.id == "seats":
            count.set_options(bot_count_options(seats))
            count.value = bots
        first = self.query_one("#first", Select)
        chosen = first.value
        first.set_options(first_seat_options(seats, min(bots, seats)))
        first.value = chosen if isinstance(chosen, int) and chosen < seats else CHANCE

    def action_create(self) -> None:
        """Check the form and hand the settings back."""
        settings = self._settings()
        if isinstance(settings, str):
            self.query_one("#create-error", Static).update(settings)
            return
        self.dismiss(settings)

    def action_cancel(self) -> None:
        """Close without creating."""
        self.dismiss(None)

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.action_create()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "create-ok":
            self.action_create()
        else:
            self.action_cancel()


class JoinCodeScreen(ModalScreen[str | None]):
    """Asks for a private match's join code."""

    BINDINGS = [Binding("escape", "cancel", show=False)]

    def compose(self) -> ComposeResult:
        with Vertical(id="join-code", classes="dialog"):
            yield Label(t("join.code_prompt"))
            yield Input(id="code", max_length=MAX_NAME_LENGTH, compact=True)
            with Horizontal(classes="buttons"):  # Enter and Esc, for a finger
                yield Button(t("join.ok"), id="join-ok", variant="primary", compact=True)
                yield Button(t("create.cancel"), id="join-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#join-code").border_title = t("join.code_title")
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        """Close without joining."""
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "join-ok":
            self.dismiss(self.query_one(Input).value.strip() or None)
        else:
            self.action_cancel()


class ChatScreen(ModalScreen[str | None]):
    """One line to say to everyone at the table."""

    BINDINGS = [Binding("escape", "cancel", show=False)]

    def compose(self) -> ComposeResult:
        with Vertical(id="chat", classes="dialog"):
            yield Label(t("chat.prompt"))
            yield Input(id="line", max_length=500, compact=True)
            with Horizontal(classes="buttons"):  # Enter and Esc, for a finger
                yield Button(t("chat.send"), id="chat-send", variant="primary", compact=True)
                yield Button(t("create.cancel"), id="chat-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#chat").border_title = t("chat.title")
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._send(event.value)

    def _send(self, value: str) -> None:
        line = value.strip()
        self.dismiss(line if line and line.isprintable() else None)

    def action_cancel(self) -> None:
        """Close without saying anything."""
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "chat-send":
            self._send(self.query_one(Input).value)
        else:
            self.action_cancel()


class ConfirmQuitScreen(ModalScreen[bool]):
    """Quitting while a match is running: say what happens, and ask."""

    BINDINGS = [
        Binding("y", "answer(True)", show=False),
        Binding("n", "answer(False)", show=False),
        Binding("escape", "answer(False)", show=False),
        Binding("q", "answer(True)", show=False),
    ]

    def __init__(self, local: bool) -> None:
        super().__init__()
        self.local = local

    def compose(self) -> ComposeResult:
        with Vertical(id="quit", classes="dialog"):
            yield Label(t("quit.local" if self.local else "quit.remote"))
            yield Label(t("quit.hint"), classes="hint")
            with Horizontal(classes="buttons"):
                yield Button(t("quit.yes"), id="quit-yes", variant="error", compact=True)
                yield Button(t("quit.no"), id="quit-no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#quit").border_title = t("quit.title")
        self.query_one("#quit-no", Button).focus()

    def action_answer(self, quit_: bool) -> None:
        """Close with the answer: True quits."""
        self.dismiss(quit_)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "quit-yes")


class PickScreen(ModalScreen[int | None]):
    """A short question answered by one of a few choices: a button each, or
    its number key (1, 2, …); Escape cancels. Dismissed with the index picked."""

    BINDINGS = [
        Binding("escape", "cancel", show=False),
        *(Binding(str(n), f"pick({n - 1})", show=False) for n in range(1, 10)),
    ]

    def __init__(self, title: str, prompt: str, options: Sequence[str]) -> None:
        super().__init__()
        self.title_text, self.prompt, self.options = title, prompt, tuple(options)

    def compose(self) -> ComposeResult:
        with Vertical(id="pick", classes="dialog"):
            yield Label(self.prompt)
            for index, option in enumerate(self.options):
                yield Button(f"{index + 1}  {option}", id=f"pick-{index}", compact=True)
            yield Button(t("create.cancel"), id="pick-cancel", compact=True)  # Esc, for a finger

    def on_mount(self) -> None:
        self.query_one("#pick").border_title = self.title_text
        if self.options:
            self.query_one("#pick-0", Button).focus()

    def action_pick(self, index: int) -> None:
        """Close with option ``index``, if there is one."""
        if 0 <= index < len(self.options):
            self.dismiss(index)

    def action_cancel(self) -> None:
        """Close without picking."""
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "pick-cancel":
            self.action_cancel()
            return
        self.dismiss(int((event.button.id or "pick-0").removeprefix("pick-")))
