"""Every size the protocol bounds, in one place.

The message definitions (:mod:`protocol.types`, :mod:`protocol.messages`)
build their constraints from these constants, the codec refuses frames above
:data:`MAX_FRAME_BYTES` before decoding a byte of them, and PROTOCOL.md's
limits table is generated from :data:`LIMITS`. Change a number here and the
validation, the encoder's promises and the document change together.

Invariant: every limit on a server→client field is at least the limit on the
client→server field it is copied from (a name accepted in ``hello`` always
fits in ``welcome``, ``chat`` text always fits in the relayed line), so a
server that relays validated input never produces a message a client refuses.
"""

from __future__ import annotations

__all__ = [
    "LIMITS",
    "MAX_ANALYSIS_DECISIONS",
    "MAX_CHAT_LENGTH",
    "MAX_DEADLINE",
    "MAX_DEPTH",
    "MAX_ERROR_LENGTH",
    "MAX_FRAME_BYTES",
    "MAX_HISTORY_PAGE",
    "MAX_ID_LENGTH",
    "MAX_LEADERBOARD_PAGE",
    "MAX_LIST_LENGTH",
    "MAX_MATCHES_LISTED",
    "MAX_NAME_LENGTH",
    "MAX_RECENT_MATCHES",
    "MAX_REQUEST_ID",
    "MAX_RULESETS",
    "MAX_SEATS",
    "MAX_STRING_LENGTH",
    "MAX_TURN_TIMER",
    "MIN_SEATS",
    "MIN_TURN_TIMER",
]

#: Largest frame (one WebSocket message) either side accepts, in bytes.
MAX_FRAME_BYTES = 64 * 1024
#: Most messages in one ``batch`` frame (a batch is a frame: MAX_FRAME_BYTES holds too).
MAX_BATCH_MESSAGES = 64
#: Longest string, in characters (code points), unless a field says otherwise.
MAX_STRING_LENGTH = 200
#: Longest player, match, bot or ruleset name and join code, in characters.
MAX_NAME_LENGTH = 40
#: Longest chat line, in characters.
MAX_CHAT_LENGTH = 500
#: Longest error message text, in characters (the sender truncates).
MAX_ERROR_LENGTH = 500
#: Longest identifier (match id, player id, resume token, string request id).
MAX_ID_LENGTH = 64
#: Longest list, unless a field says otherwise.
MAX_LIST_LENGTH = 256
#: Most events in one ``replay`` message; a longer match comes in pages.
MAX_REPLAY_EVENTS = 400
#: Most matches in one ``match_list``: even with the longest names in 4-byte
#: characters, that many summaries fit in one frame.
MAX_MATCHES_LISTED = 32
#: Most lines in one ``leaderboard`` page.
MAX_LEADERBOARD_PAGE = 50
#: Most matches in one ``history`` page: even with six seats of the longest
#: names in 4-byte characters, that many records fit in one frame.
MAX_HISTORY_PAGE = 20
#: Most recent matches on a ``profile`` card.
MAX_RECENT_MATCHES = 10
#: Most rulesets one server offers (``welcome.rulesets``), the printed rules included.
MAX_RULESETS = 16
#: Largest integer request id: 2**53 - 1, JavaScript's Number.MAX_SAFE_INTEGER,
#: so that a JavaScript client's every id is a plain number, exactly.
MAX_REQUEST_ID = 2**53 - 1
#: Most decisions in one ``analysis``: more than one seat makes in any match.
MAX_ANALYSIS_DECISIONS = 128
#: Seats in a match (R5).
MIN_SEATS = 2
MAX_SEATS = 6
#: Shortest and longest turn timer, in seconds.
MIN_TURN_TIMER = 1.0
MAX_TURN_TIMER = 3600.0
#: Largest ``deadline`` of a prompt, in seconds.
MAX_DEADLINE = 86400.0
#: Deepest nesting a sender may produce, counting the message map as level 1.
#: Every field a receiver knows has a fixed shape, shallower than this (the
#: deepest, a replay page's final scoring in a batch, nests 10 levels); the values of fields
#: it does not know are skipped without being built, and a frame nested beyond
#: the decoder's recursion limit is refused as ``bad_frame``.
MAX_DEPTH = 32

#: (name, value, meaning) for the limits table of PROTOCOL.md.
LIMITS: tuple[tuple[str, object, str], ...] = (
    ("MAX_FRAME_BYTES", MAX_FRAME_BYTES, "bytes in one frame; larger ones are refused unread"),
    ("MAX_STRING_LENGTH", MAX_STRING_LENGTH, "characters in a string unless the field says less"),
    ("MAX_NAME_LENGTH", MAX_NAME_LENGTH, "characters in a player, match or ruleset name"),
    ("MAX_CHAT_LENGTH", MAX_CHAT_LENGTH, "characters in a chat line"),
    ("MAX_ERROR_LENGTH", MAX_ERROR_LENGTH, "characters in an error message"),
    ("MAX_ID_LENGTH", MAX_ID_LENGTH, "characters in a match id, player id, token, request id"),
    ("MAX_LIST_LENGTH", MAX_LIST_LENGTH, "items in a list unless the field says less"),
    ("MAX_MATCHES_LISTED", MAX_MATCHES_LISTED, "matches in one `match_list` (the server picks)"),
    ("MAX_LEADERBOARD_PAGE", MAX_LEADERBOARD_PAGE, "lines in one `leaderboard` page"),
    ("MAX_HISTORY_PAGE", MAX_HISTORY_PAGE, "matches in one `history` page"),
    ("MAX_RECENT_MATCHES", MAX_RECENT_MATCHES, "recent matches on a `profile` card"),
    ("MAX_ANALYSIS_DECISIONS", MAX_ANALYSIS_DECISIONS, "decisions in one `analysis`"),
    ("MAX_REQUEST_ID", MAX_REQUEST_ID, "largest integer request id"),
    ("MAX_RULESETS", MAX_RULESETS, "rulesets in `welcome.rulesets`, `standard` included"),
    ("MIN_SEATS", MIN_SEATS, "fewest seats in a match"),
    ("MAX_SEATS", MAX_SEATS, "most seats in a match; seats are numbered 0 to 5"),
    ("MIN_TURN_TIMER", MIN_TURN_TIMER, "shortest turn timer, seconds"),
    ("MAX_TURN_TIMER", MAX_TURN_TIMER, "longest turn timer, seconds"),
    ("MAX_DEADLINE", MAX_DEADLINE, "largest prompt deadline, seconds"),
    ("MAX_DEPTH", MAX_DEPTH, "deepest nesting a sender may produce (the message is level 1)"),
)
