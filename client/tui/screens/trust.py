"""Trust on first use: the first time a ``wss://`` server is met, show its
certificate's fingerprint and ask whether to trust it (as SSH does).

Dismisses with True (trust it: the app remembers it in ``known_servers``) or
False (do not connect). Nothing is trusted by default: Escape and ``n`` say no.
A server picked from the LAN list is asked about the same way; the dialog
adds that its announcement named this fingerprint, and that this proves
nothing by itself (anyone on the LAN can announce anything).
"""

from __future__ import annotations

import math

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Static

from ..i18n import rich, t

__all__ = ["FingerprintView", "TrustScreen", "fingerprint_lines"]

#: The dialog's border and padding, left and right together (``.dialog`` in tulips.tcss).
DIALOG_FRAME = 6


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
            yield FingerprintView(self.fingerprint, id="trust-fingerprint")
            if self.announced:
                yield Static(t("trust.announced"), id="trust-announced")
            yield Static(t("trust.compare"), id="trust-compare")
            with Horizontal(classes="buttons"):
                yield Button(t("trust.yes"), id="trust-yes", variant="warning", compact=True)
                yield Button(t("trust.no"), id="trust-no", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#trust").border_title = t("trust.title")
        self.query_one("#trust-no", Button).focus()
        self._fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, columns: int) -> None:
        """Widen the dialog to show the fingerprint on one line when the terminal
        has the room; else it keeps its width and the fingerprint breaks at colons."""
        one_line = len(self.fingerprint) + DIALOG_FRAME
        self.query_one("#trust").styles.width = one_line if columns >= one_line else None

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust-yes")

    def action_answer(self, trusted: bool) -> None:
        """Trust the certificate, or not."""
        self.dismiss(trusted)


def fingerprint_lines(fingerprint: str, width: int) -> list[str]:
    """``fingerprint`` (``SHA256:AB:CD:…``) in as few lines of ``width`` as it fits:
    one if it fits whole; else broken after a colon, never inside a pair, with
    the pairs spread evenly (16 and 16 for SHA-256) and the lines after the
    first indented under the first pair, so the two halves read as columns."""
    if len(fingerprint) <= width:
        return [fingerprint]
    prefix, _, rest = fingerprint.partition(":")
    pairs = rest.split(":")
    indent = len(prefix) + 1
    per = len(pairs)
    for count in range(2, len(pairs) + 1):
        per = math.ceil(len(pairs) / count)
        if indent + 3 * per <= width:  # each pair and the colon after it
            break
    chunks = [pairs[i : i + per] for i in range(0, len(pairs), per)]
    lines = [":".join(chunk) + ":" for chunk in chunks]
    lines[-1] = lines[-1].removesuffix(":")
    return [f"{prefix}:{lines[0]}", *(" " * indent + line for line in lines[1:])]


class FingerprintView(Widget):
    """A certificate's fingerprint, laid out by :func:`fingerprint_lines` for the
    width it is given: a pair of hex digits is never split, nor a colon lost."""

    DEFAULT_CSS = """
    FingerprintView {
        height: auto;
    }
    """

    def __init__(self, fingerprint: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.fingerprint = fingerprint

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return len(self.fingerprint)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(fingerprint_lines(self.fingerprint, width))

    def render(self) -> Text:
        lines = fingerprint_lines(self.fingerprint, self.size.width or 80)
        return Text("\n".join(lines), style="bold cyan", no_wrap=True)
