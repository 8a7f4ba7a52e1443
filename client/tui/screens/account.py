"""The profile's settings, as dialogs: a new name (:class:`RenameScreen`), a
code to link another device (:class:`LinkCodeScreen`), and a code from
another device typed here (:class:`UseLinkScreen`).

The rename and link dialogs do their request themselves, through the
callable they are given, so that a refusal (a name another player has, a
wrong code) is said in the dialog, which stays open to try again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from protocol.limits import MAX_ID_LENGTH, MAX_NAME_LENGTH

from ..i18n import t, tn

__all__ = ["LinkCodeScreen", "RenameScreen", "UseLinkScreen"]

#: Does the request; returns why it failed, in words, or None when it worked.
Attempt = Callable[[str], Awaitable[str | None]]


class _AskScreen(ModalScreen[str | None]):
    """One line to type, sent with :attr:`attempt`; closed with what was
    typed once it worked, or None (Esc)."""

    BINDINGS = [Binding("escape", "cancel", show=False)]
    DIALOG_ID = ""
    TITLE_KEY = ""
    PROMPT_KEY = ""
    OK_KEY = ""
    MAX_LENGTH = MAX_NAME_LENGTH

    def __init__(self, attempt: Attempt, value: str = "") -> None:
        super().__init__()
        self.attempt = attempt
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id=self.DIALOG_ID, classes="dialog"):
            yield Label(t(self.PROMPT_KEY))
            yield Input(self.value, id="ask", max_length=self.MAX_LENGTH, compact=True)
            yield Static(id="ask-error")
            with Horizontal(classes="buttons"):
                yield Button(t(self.OK_KEY), id="ask-ok", variant="primary", compact=True)
                yield Button(t("create.cancel"), id="ask-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one(f"#{self.DIALOG_ID}").border_title = t(self.TITLE_KEY)
        self.query_one(Input).focus()

    def check(self, value: str) -> str | None:
        """Why ``value`` cannot be sent, or None."""
        return None if value and value.isprintable() else t("profile.bad_value")

    def _submit(self) -> None:
        value = self.query_one(Input).value.strip()
        problem = self.check(value)
        if problem is not None:
            self.query_one("#ask-error", Static).update(Text(problem, style="bold red"))
            return
        self.send(value)

    @work(exclusive=True, group="ask", exit_on_error=False)
    async def send(self, value: str) -> None:
        """Try it; close if it worked, else say why and stay."""
        self.query_one("#ask-error", Static).update(Text(t("page.loading"), style="dim"))
        problem = await self.attempt(value)
        if problem is None:
            self.dismiss(value)
        else:
            self.query_one("#ask-error", Static).update(Text(problem, style="bold red"))

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "ask-ok":
            self._submit()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        """Close without changing anything."""
        self.dismiss(None)


class RenameScreen(_AskScreen):
    """A new name for the player on this server (and every device of theirs)."""

    DIALOG_ID = "rename-dialog"
    TITLE_KEY = "profile.rename_title"
    PROMPT_KEY = "profile.rename_prompt"
    OK_KEY = "profile.rename_ok"


class UseLinkScreen(_AskScreen):
    """The code another device of the player shows: this one becomes that player."""

    DIALOG_ID = "use-link-dialog"
    TITLE_KEY = "profile.use_link_title"
    PROMPT_KEY = "profile.use_link_prompt"
    OK_KEY = "profile.use_link_ok"
    MAX_LENGTH = MAX_ID_LENGTH


class LinkCodeScreen(ModalScreen[None]):
    """Shows a one-time code to type on another device, and how long it lasts."""

    BINDINGS = [Binding("escape,enter", "close", show=False)]

    def __init__(self, code: str, expires_in: float) -> None:
        super().__init__()
        self.code = code
        self.expires_in = expires_in

    def compose(self) -> ComposeResult:
        minutes = max(1, round(self.expires_in / 60))
        with Vertical(id="link-dialog", classes="dialog"):
            yield Label(t("profile.link_prompt"))
            yield Static(Text(self.code, style="bold reverse"), id="link-code-text")
            yield Label(tn("profile.link_expires", minutes, minutes=minutes), classes="hint")
            with Horizontal(classes="buttons"):
                yield Button(t("profile.close"), id="link-close", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#link-dialog").border_title = t("profile.link_title")

    def on_button_pressed(self, _event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        """Close the code (it stays valid until it expires or is used)."""
        self.dismiss(None)
