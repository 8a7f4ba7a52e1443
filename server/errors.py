"""The server's own errors, and the one place where whatever a request
raised becomes a wire ``error``.

Handlers refuse a request by raising :class:`protocol.ProtocolError` with an
:class:`~protocol.ErrorCode`; the engine refuses an action with its own
:class:`~engine.IllegalAction`; storage fails with :class:`StorageError`.
:func:`error_for` maps all of them (and anything unforeseen, as
``internal_error``) to the message the client receives.
"""

from __future__ import annotations

import protocol as wire
from engine import IllegalAction, NotYourTurn

__all__ = ["StorageError", "StorageLocked", "error_for", "refused"]


class StorageError(Exception):
    """The data directory cannot be used, or a write failed."""


class StorageLocked(StorageError):
    """A write is not stored *yet*: another process holds the database's lock.

    Storage keeps trying it (it is no lasting fault); a match told this pauses
    until the write goes through or finally fails."""


def refused(code: wire.ErrorCode, message: str) -> wire.ProtocolError:
    """A request the server will not grant: ``raise refused(...)``."""
    return wire.ProtocolError(code, message)


def error_for(exc: BaseException, request_id: wire.RequestId | None = None) -> wire.Error:
    """The wire error for anything a request raised."""
    if isinstance(exc, wire.ProtocolError):
        return wire.error_message_for(exc, request_id)
    if isinstance(exc, NotYourTurn):
        error = wire.ProtocolError(wire.ErrorCode.NOT_YOUR_TURN, str(exc))
    elif isinstance(exc, IllegalAction):
        error = wire.ProtocolError(wire.ErrorCode.ILLEGAL_ACTION, str(exc))
    elif isinstance(exc, StorageError):
        error = wire.ProtocolError(
            wire.ErrorCode.STORAGE_UNAVAILABLE,
            "the server cannot store this now (its disk is full or unwritable); try again later",
        )
    else:
        error = wire.ProtocolError(wire.ErrorCode.INTERNAL_ERROR, "internal error")
    return wire.error_message_for(error, request_id)
