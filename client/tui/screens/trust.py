"""Trust on first use: the first time a ``wss://`` server is met, show its
certificate's fingerprint and ask whether to trust it (as SSH does).

Dismisses with True (trust it: the app remembers it in ``known_servers``) or
False (do not connect). Nothing is trusted by default: Escape and ``n`` say no.
A server picked from the LAN list is asked about the same way; the dialog
adds that its announcement named this fingerprint, and that this proves
nothing by itself (anyone on the LAN can announce anything).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ..i18n import rich, t

__all__ = ["TrustScreen"]


class TrustScreen(ModalScreen[bool]):
    """Asks whether to trust ``server``'s certificate, shown by ``fingerprint``
    (``announced``: the server was picked from the LAN list, announcing it)."""

    BINDINGS = [
        Binding("escape", "answer(False)", show=False),
        Binding("n", "answer(False)", show=False),
        Binding("y", "answer(True)", show=False),
    ]

    def __init__(self, server: str, fingerprint: str, *, announced: bool = False) -> None:
        super().__init__()
        self.server = server
        self.fingerprint = fingerprint
        self.announced = announced

    def compose(self) -> ComposeResult:
        with Vertical(id="trust", classes="dialog"):
            yield Static(rich("trust.first_time", server=Text(self.server, style="bold")))
            yield Static(
                Text(_two_lines(self.fingerprint), style="bold cyan"), id="trust-fingerprint"
            )
            if self.announced:
                yield Static(t("trust.announced"), id="trust-announced")
            yield Static(t("trust.compare"), id="trust-compare")
            with Horizontal(classes="buttons"):
                yield Button(t("trust.yes"), id="trust-yes", variant="warning", compact=True)
                yield Button(t("trust.no"), id="trust-no", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#trust").border_title = t("trust.title")
        self.query_one("#trust-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust-yes")

    def action_answer(self, trusted: bool) -> None:
        """Trust the certificate, or not."""
        self.dismiss(trusted)


def _two_lines(fingerprint: str) -> str:
    """``SHA256:`` and 16 pairs, then the other 16 under them: easy to compare, and
    never broken at a place the dialog's width picks."""
    prefix, _, pairs = fingerprint.partition(":")
    first, second = pairs[:47], pairs[48:]
    return f"{prefix}:{first}\n{' ' * (len(prefix) + 1)}{second}"
