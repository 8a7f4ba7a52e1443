"""The plain sentence shown instead of a screen that does not fit the window.

Every screen of the app holds one; the stylesheet shows it — and hides
everything else on the screen — while the screen carries the breakpoint
classes ``-too-narrow`` or ``-too-short`` (:attr:`TulipsApp.HORIZONTAL_BREAKPOINTS`),
so a screen is never drawn cut off: it says how big the window must be. From
:data:`NARROW_WIDTH` up to :data:`MIN_WIDTH` columns the screens have a narrow
layout instead (the ``-narrow`` class), so the message asks for 80×24 only
where that is the layout that is left.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.widget import Widget

from ..i18n import t

__all__ = ["MIN_HEIGHT", "MIN_WIDTH", "NARROW_WIDTH", "TooSmall"]

#: The smallest window the table is laid out for side by side.
MIN_WIDTH, MIN_HEIGHT = 80, 24
#: The narrowest window of the narrow layout (a phone in portrait, in a browser:
#: about 40 columns), which stacks the panels and has a button for every key.
NARROW_WIDTH = 40


class TooSmall(Widget):
    """ "This window is 60×16; make it at least 80×24." (Under 40 columns:
    "at least 40×24, or 80×24 side by side".)"""

    def render(self) -> RenderableType:
        width, height = self.screen.size
        sizes = {"width": width, "height": height, "min_height": MIN_HEIGHT}
        if width < NARROW_WIDTH:  # too narrow even for a phone's layout: say how narrow will do
            message = t("small.message_narrow", narrow=NARROW_WIDTH, min_width=MIN_WIDTH, **sizes)
        else:
            message = t("small.message", min_width=MIN_WIDTH, **sizes)
        return Text(message, justify="center", style="bold")

    def on_resize(self) -> None:
        self.refresh()
