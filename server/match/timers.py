"""The timers a match core has set: turn timers, grace periods, an open
match's countdown. Each is set under a name never used before, so a tick of
one that was cancelled or replaced after it fired is known for what it is."""

from __future__ import annotations

from .outputs import CancelTimer, SetTimer

__all__ = ["Timers"]


class Timers:
    """Named deadlines, each asked of the actor with :class:`~.outputs.SetTimer`."""

    def __init__(self) -> None:
        self._deadlines: dict[str, float] = {}
        self._serial = 0

    def __bool__(self) -> bool:
        return bool(self._deadlines)

    def set(self, kind: str, at: float) -> SetTimer:
        """A new timer of ``kind`` (a word for the name) due at ``at``."""
        self._serial += 1
        name = f"{kind}:{self._serial}"
        self._deadlines[name] = at
        return SetTimer(name, at)

    def cancel(self, name: str | None) -> CancelTimer | None:
        """Cancel the timer of that name, if it is still set."""
        if name is None or self._deadlines.pop(name, None) is None:
            return None
        return CancelTimer(name)

    def fired(self, name: str) -> bool:
        """The timer of that name fired: whether it was still set (it is not now)."""
        return self._deadlines.pop(name, None) is not None

    def cancel_all(self) -> list[CancelTimer]:
        """Cancel every timer."""
        cancelled = [CancelTimer(name) for name in self._deadlines]
        self._deadlines.clear()
        return cancelled

    def copy(self) -> Timers:
        """The timers as they are now (to restore if a change is not stored)."""
        other = Timers()
        other._deadlines = dict(self._deadlines)
        other._serial = self._serial
        return other
