"""The protocol's one exception, its error codes and its close codes.

:class:`ProtocolError` is the only exception :mod:`protocol.codec` lets
escape, whatever the bytes; the server also raises it for requests that
decode but cannot be granted (``not_your_turn``, ``seat_taken``, …).
:func:`error_message_for` is the one place that turns it into the ``error``
message sent on the wire, and :func:`close_code_for` the one place that says
which errors also end the connection, and with which WebSocket close code.

The tables :data:`ERROR_CODE_DOCS` and :data:`CLOSE_CODE_DOCS` say when each
code is used; PROTOCOL.md's tables are generated from them.
"""

from __future__ import annotations

import enum

from .limits import MAX_ERROR_LENGTH, MAX_STRING_LENGTH
from .messages import Error
from .types import RequestId

__all__ = [
    "CLOSE_CODE_DOCS",
    "ERROR_CODE_DOCS",
    "CloseCode",
    "ErrorCode",
    "ProtocolError",
    "close_code_for",
    "error_message_for",
]


class ErrorCode(enum.StrEnum):
    """The ``code`` of an ``error`` message. See :data:`ERROR_CODE_DOCS`."""

    BAD_FRAME = "bad_frame"
    BAD_MESSAGE = "bad_message"
    UNSUPPORTED_VERSION = "unsupported_version"
    UNKNOWN_TYPE = "unknown_type"
    TOO_LARGE = "too_large"
    NOT_WELCOME = "not_welcome"
    BAD_TOKEN = "bad_token"
    BAD_LINK_CODE = "bad_link_code"
    NO_SUCH_MATCH = "no_such_match"
    NO_SUCH_PLAYER = "no_such_player"
    NAME_TAKEN = "name_taken"
    MATCH_NOT_OPEN = "match_not_open"
    MATCH_NOT_READY = "match_not_ready"
    MATCH_PAUSED = "match_paused"
    SEAT_TAKEN = "seat_taken"
    BAD_JOIN_CODE = "bad_join_code"
    LOCKED_OUT = "locked_out"
    NOT_IN_MATCH = "not_in_match"
    NOT_HOST = "not_host"
    NOT_YOUR_TURN = "not_your_turn"
    DECISION_TAKEN = "decision_taken"
    ILLEGAL_ACTION = "illegal_action"
    RATE_LIMITED = "rate_limited"
    SERVER_FULL = "server_full"
    STORAGE_UNAVAILABLE = "storage_unavailable"
    HINTS_OFF = "hints_off"
    NOT_FINISHED = "not_finished"
    NOT_YOUR_SEAT = "not_your_seat"
    ANALYSIS_BUSY = "analysis_busy"
    ELSEWHERE = "elsewhere"
    NODE_UNAVAILABLE = "node_unavailable"
    CLUSTER_UNAVAILABLE = "cluster_unavailable"
    INTERNAL_ERROR = "internal_error"


#: When each error code is sent.
ERROR_CODE_DOCS: dict[ErrorCode, str] = {
    ErrorCode.BAD_FRAME: "The frame is not MessagePack, not one map, a text frame, "
    "or nested too deeply.",
    ErrorCode.BAD_MESSAGE: "The map breaks its message's schema (a missing field, a wrong "
    "type, a value out of range), or its fields do not fit together (a bot or `first_seat` "
    "beyond `seats`, two bots on one seat, a ruleset the server does not offer). "
    "`path` names the field.",
    ErrorCode.UNSUPPORTED_VERSION: "`v` is a version the server does not speak (for `hello`: "
    "no entry of `versions`, default `[v]`, is one it speaks); the message lists those it "
    "does. The connection is closed, before `welcome` or after.",
    ErrorCode.UNKNOWN_TYPE: "`type` names no client→server message of this version.",
    ErrorCode.TOO_LARGE: "A message larger than `MAX_FRAME_BYTES` (raised by `encode`). A frame "
    "that large from a client is refused by the WebSocket layer before it is read: the "
    "connection is closed with 1009 and no `error` is sent.",
    ErrorCode.NOT_WELCOME: "A request other than `hello` before `welcome`, or a second `hello`.",
    ErrorCode.BAD_TOKEN: "`hello.token` resumes no identity. The connection is closed.",
    ErrorCode.BAD_LINK_CODE: "`hello.link` is no code this server gave out, or it expired or "
    "was used already. The connection is closed; get a new code with `link_code` on the "
    "first device. Added within version 1.",
    ErrorCode.NO_SUCH_MATCH: "`match` names no match the server knows.",
    ErrorCode.NO_SUCH_PLAYER: "`profile.player` names no player the server knows (or one the "
    "operator removed). Added within version 1.",
    ErrorCode.NAME_TAKEN: "`rename` to a name another player of this server has, in any case. "
    "Nothing changed. (A `hello` whose name is taken is not refused: `welcome.name` says the "
    "free variant it got, e.g. `Anna 2`.) Added within version 1.",
    ErrorCode.MATCH_NOT_OPEN: "`join` of a match that has started or finished, "
    "or `start` of one already started.",
    ErrorCode.MATCH_NOT_READY: "`start` while a seat is still empty, `act` or `sync` before "
    "the match has started, or `play_again` before it has finished.",
    ErrorCode.MATCH_PAUSED: "`act` in a match the server could not store (a full disk, an "
    "unwritable data directory): it is paused, the action was not carried out, and the "
    "match resumes when the operator has fixed the disk and restarted the server. Also `act` "
    "while the server shuts down (the connection is then closed with 1001).",
    ErrorCode.SEAT_TAKEN: "`join` of a seat someone (or a bot) holds, or of a full match.",
    ErrorCode.BAD_JOIN_CODE: "`join`, `watch` or `replay` of a match with a join code, "
    "without it or with a wrong one.",
    ErrorCode.LOCKED_OUT: "`join`, `watch` or `replay` of a match after too many wrong join "
    "codes for it from the client's address (by default 5, each within a minute of the "
    "last): even the right code is refused until the lockout ends, by default a minute; "
    "the message says how long.",
    ErrorCode.NOT_IN_MATCH: "`leave`, `start`, `play_again`, `act`, `sync`, `chat` or `hint` "
    "outside a match, or `act`, `hint` or `play_again` by a spectator.",
    ErrorCode.NOT_HOST: "`start` by a player who is not the match's host.",
    ErrorCode.NOT_YOUR_TURN: "`act` or `hint` by a seat that has nothing to do now.",
    ErrorCode.DECISION_TAKEN: "`act` (or `hint`) whose `seq` names a decision that is no "
    "longer open: "
    "it was taken meanwhile — the turn timer ran out, the server played the seat while its "
    "player was away, or another connection of the same player acted — or a newer one has "
    "been prompted since. Nothing changed; the prompt of the decision open now, if the seat "
    "has one, came before this error. For `hint`: also when the decision was taken before "
    "the hint was ready.",
    ErrorCode.ILLEGAL_ACTION: "`act` with an action that is not among the seat's legal "
    "actions; the match is unchanged.",
    ErrorCode.RATE_LIMITED: "The connection sent more frames (messages, pings and pongs) than "
    "its rate allows (`welcome.limits`) and kept on; the server had slowed down reading it, "
    "and now closes it with 4008. On `hello` without a token: the client's address has made "
    "too many new identities lately; say `hello` with a token, or try again later. On `hello` "
    "with a `link`: too many wrong link codes from the address lately (the connection is "
    "closed). On `link_code`: too many codes asked for lately.",
    ErrorCode.SERVER_FULL: "The server takes no more connections or matches. "
    "On `hello` the connection is closed.",
    ErrorCode.STORAGE_UNAVAILABLE: "The server cannot write to its disk now (full, or "
    "unwritable), and the request needs something stored: a `hello` without a token (a new "
    "identity; the connection is closed with 1013), or `start` (the match stays open). "
    "Nothing was changed; try again later.",
    ErrorCode.HINTS_OFF: "`hint` in a match whose host did not allow hints "
    "(`create_match.hints`). Added within version 1.",
    ErrorCode.NOT_FINISHED: "`analyse` of a match that is not finished yet: an analysis "
    "would tell what a seat's options were worth while others still play. Added within "
    "version 1.",
    ErrorCode.NOT_YOUR_SEAT: "`analyse` of a seat that is not yours (R27), in a match that is "
    "not a finished open-box one; or without `seat` by a client that holds no seat in the "
    "match. Added within version 1.",
    ErrorCode.ANALYSIS_BUSY: "`analyse` when the server's queue of analyses is full, or when "
    "you already wait for as many analyses as one player may at once (on all your devices "
    "together; the message says which), or `hint` "
    "while your previous `hint` is still being computed, or while the server's workers are "
    "all busy with hints. Nothing was started; try again a little later. Added within "
    "version 1.",
    ErrorCode.ELSEWHERE: "Clusters only: the match lives on another node of this server's "
    "cluster; `url` says where and `match` which match. Connect to `url`, say `hello` with your "
    "token, and send the request again (see [a cluster of nodes](#a-cluster-of-nodes)). Also "
    "sent unasked, without an `id`, right after `welcome`, when the seat a `hello` resumes is "
    "there. Nothing was changed.",
    ErrorCode.NODE_UNAVAILABLE: "Clusters only: `join`, `watch` or `replay` of a match whose "
    "node is not answering (its summary says `available` false); also sent unasked after "
    "`welcome` when the seat a `hello` resumes is there. The match is kept: try again once its "
    "node is back.",
    ErrorCode.CLUSTER_UNAVAILABLE: "Clusters only: the node cannot reach the store its cluster "
    "shares, and the request needs it: a `join`, `watch` or `replay` of a match on another "
    "node, `profile`, `leaderboard` or `history` (the nodes share them), or a `hello` whose "
    "token another node made (the connection is then closed with 1013). Matches on this "
    "node go on; try again later.",
    ErrorCode.INTERNAL_ERROR: "The server failed; the request may not have been carried out. "
    "Clients treat an error code they do not know like this one.",
}


class CloseCode(enum.IntEnum):
    """WebSocket close codes the server uses. See :data:`CLOSE_CODE_DOCS`."""

    NORMAL_CLOSURE = 1000
    GOING_AWAY = 1001
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    TRY_AGAIN_LATER = 1013
    PROTOCOL_VIOLATION = 4000
    UNSUPPORTED_VERSION = 4001
    BAD_TOKEN = 4002
    HELLO_TIMEOUT = 4003
    REPLACED = 4004
    TOO_SLOW = 4005
    RATE_LIMITED = 4008
    SERVER_FULL = 4009


#: When the server closes with each code.
CLOSE_CODE_DOCS: dict[CloseCode, str] = {
    CloseCode.NORMAL_CLOSURE: "The client asked to close, or the server closes an idle "
    "connection cleanly.",
    CloseCode.GOING_AWAY: "The server is shutting down; reconnect later with the token.",
    CloseCode.MESSAGE_TOO_BIG: "A frame was larger than `MAX_FRAME_BYTES`: it was refused "
    "unread, and no `error` is sent.",
    CloseCode.INTERNAL_ERROR: "The server hit an unexpected error on this connection.",
    CloseCode.TRY_AGAIN_LATER: "After `storage_unavailable` in answer to `hello`: the server "
    "cannot store a new identity now; or after `cluster_unavailable`: it cannot check a token "
    "another node of its cluster made. Try again later.",
    CloseCode.PROTOCOL_VIOLATION: "`max_bad_frames` `bad_frame`, `bad_message` or "
    "`unknown_type` errors in a row (see `welcome.limits`); before `welcome`, `not_welcome` "
    "counts too.",
    CloseCode.UNSUPPORTED_VERSION: "After `unsupported_version`.",
    CloseCode.BAD_TOKEN: "After `bad_token`; say `hello` again without a token for a new identity. "
    "Also after `bad_link_code`.",
    CloseCode.HELLO_TIMEOUT: "No `hello` was welcomed within `hello_timeout` seconds of "
    "connecting.",
    CloseCode.REPLACED: "The same identity said `hello` on another connection; the newer one wins.",
    CloseCode.TOO_SLOW: "The client did not read what the server sent: what was waiting for "
    "it grew past the server's budget for one client, or a write waited a minute. Reconnect "
    "and `sync`.",
    CloseCode.RATE_LIMITED: "After `rate_limited`: the client kept sending faster than its rate.",
    CloseCode.SERVER_FULL: "After `server_full` in answer to `hello`.",
}

#: The errors that end the connection, and how.
_CLOSING: dict[ErrorCode, CloseCode] = {
    ErrorCode.UNSUPPORTED_VERSION: CloseCode.UNSUPPORTED_VERSION,
    ErrorCode.TOO_LARGE: CloseCode.MESSAGE_TOO_BIG,
    ErrorCode.BAD_TOKEN: CloseCode.BAD_TOKEN,
    ErrorCode.BAD_LINK_CODE: CloseCode.BAD_TOKEN,
    ErrorCode.SERVER_FULL: CloseCode.SERVER_FULL,
    ErrorCode.STORAGE_UNAVAILABLE: CloseCode.TRY_AGAIN_LATER,
    ErrorCode.CLUSTER_UNAVAILABLE: CloseCode.TRY_AGAIN_LATER,
}


class ProtocolError(Exception):
    """A message that cannot be decoded, or a request that cannot be granted.

    ``path`` names the offending field, starting with the message type
    (``"act.action.to_seat"``); ``request_id`` is the ``id`` of the request
    it answers, when known. ``str(error)`` reads
    ``"act.action.to_seat: expected int, got str"``. ``url`` and ``match`` are
    set on ``elsewhere`` (where the match lives) and ``node_unavailable``;
    ``fingerprint`` on ``elsewhere`` to a node that serves ``wss://``.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        path: str | None = None,
        request_id: RequestId | None = None,
        url: str | None = None,
        match: str | None = None,
        fingerprint: str | None = None,
    ) -> None:
        super().__init__(code, message, path, request_id)
        self.code = code
        self.message = message
        self.path = path
        self.request_id = request_id
        self.url = url
        self.match = match
        self.fingerprint = fingerprint

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def __repr__(self) -> str:
        return (
            f"ProtocolError({self.code.value!r}, {self.message!r}, "
            f"path={self.path!r}, request_id={self.request_id!r})"
        )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_message_for(error: ProtocolError, request_id: RequestId | None = None) -> Error:
    """The ``error`` message that reports ``error`` to its client.

    Its ``id`` is the error's own ``request_id`` or, when that is unknown (an
    error raised while handling a request that decoded fine), ``request_id``.
    The text and path are clipped to their wire limits, so the result always
    encodes to a message every client accepts.
    """
    return Error(
        code=error.code.value,
        message=_clip(error.message, MAX_ERROR_LENGTH) or error.code.value,
        path=None if error.path is None else _clip(error.path, MAX_STRING_LENGTH),
        id=error.request_id if error.request_id is not None else request_id,
        url=error.url,
        match=error.match,
        fingerprint=error.fingerprint,
    )


def close_code_for(error: ProtocolError) -> CloseCode | None:
    """The close code to end the connection with after reporting ``error``,
    or None when the connection stays open."""
    return _CLOSING.get(error.code)
