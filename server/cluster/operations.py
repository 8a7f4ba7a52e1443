"""The operator's tools for a cluster's shared ratings and players, on its
store (run by ``tulips-cluster``, :mod:`.admin`)::

    tulips-cluster --cluster URL --cluster-key-file FILE ratings export [--what ...]
    tulips-cluster --cluster URL --cluster-key-file FILE ratings reset --yes
    tulips-cluster --cluster URL --cluster-key-file FILE players remove PLAYER_ID --yes

They do for the cluster what ``tulips-server ratings|players`` do for one
server's file (:mod:`server.operator_tools`), with the same columns and words:

- ``export`` writes the shared ratings (best first) or the shared history
  (one line per seat of every match any node finished, with the node that ran
  it), as CSV or JSON. It only reads: nodes may run meanwhile.
- ``reset`` starts every shared rating again, in one step (the board and the
  ratings together; the marks, records and totals stay, so no match counts
  again and history keeps the changes it shows). A node applying a result
  meanwhile reads the ratings again (its transaction watches them), so no
  rating is made of old ones: it is safe while nodes run.
- ``remove`` takes a player out of everything the nodes share — identity,
  tokens, names, link codes, rating, board, totals, history index — and
  anonymises their seats in every match record ("removed player", the
  matches stay). The nodes' files hold the player too: the removal is noted
  in the store, and each node removes them from its own file when it starts,
  before it loads anyone (as ``tulips-server players remove`` would). So it
  is refused while any node is alive: a running node has the player in memory
  and would register them again.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from ..operator_tools import HISTORY_FIELDS, OperatorError
from ..ratings.cards import REMOVED_NAME, bot_name
from ..ratings.model import STRENGTH_OF
from .entries import RatedChange, RatingsApplied
from .ratings import record_of
from .store import Store

__all__ = [
    "CLUSTER_HISTORY_FIELDS",
    "NodesAlive",
    "anonymised",
    "history_rows",
    "rating_rows",
    "remove_player",
    "reset_ratings",
]

#: the history export's columns: one server's, and the node that ran the match
CLUSTER_HISTORY_FIELDS = (*HISTORY_FIELDS, "node")
_PAGE = 500


async def rating_rows(store: Store) -> list[dict[str, Any]]:
    """The shared ratings, best first, as ``tulips-server ratings export`` lists them."""
    rows: list[dict[str, Any]] = []
    offset = 0
    while True:
        page, total = await store.board(offset, _PAGE)
        names = await store.player_entries(ident for ident, _ in page)
        for ident, entry in page:
            strength = STRENGTH_OF.get(ident)
            known = names.get(ident)
            name = bot_name(strength) if strength else (known.name if known else REMOVED_NAME)
            rows.append(
                {
                    "rank": len(rows) + 1,
                    "player": ident,
                    "name": name,
                    "kind": "bot" if strength else "human",
                    "mu": entry.mu,
                    "sigma": entry.sigma,
                    "ordinal": entry.mu - 3 * entry.sigma,
                    "matches": entry.matches,
                    "wins": entry.wins,
                }
            )
        offset += _PAGE
        if offset >= total:
            return rows


async def history_rows(store: Store) -> list[dict[str, Any]]:
    """One line per seat of every match in the shared history, in the order applied."""
    rows: list[dict[str, Any]] = []
    offset = 0
    while True:
        page, held = await store.results(offset, _PAGE)
        for cursor, mark in page:
            record = record_of(cursor, mark)
            result = record.result
            for seat in result.seats:
                change = record.changes.get(seat.seat)
                rows.append(
                    {
                        "match": result.match,
                        "finished": result.finished,
                        "name": result.name,
                        "ruleset": result.ruleset,
                        "rated": int(result.rated),
                        "seat": seat.seat,
                        "player": seat.player,
                        "player_name": seat.name,
                        "bot": seat.bot,
                        "points": seat.points,
                        "place": seat.place,
                        "counted": int(change is not None),
                        "mu_before": change.before.mu if change else None,
                        "sigma_before": change.before.sigma if change else None,
                        "mu_after": change.after.mu if change else None,
                        "sigma_after": change.after.sigma if change else None,
                        "node": record.node,
                    }
                )
        offset += _PAGE
        if held < _PAGE:
            return rows


async def reset_ratings(store: Store) -> int:
    """Every shared rating starts again; how many there were."""
    return await store.reset_ratings()


def anonymised(mark: RatingsApplied, player: str) -> RatingsApplied:
    """The mark with the player's seats and changes made a removed player's
    (as ``tulips-server players remove`` leaves their seats: no id, the name
    ``removed player``)."""
    record = mark.record
    assert record is not None, "only marks with a record are listed"
    seats = tuple(
        msgspec.structs.replace(seat, player=None, name=REMOVED_NAME)
        if seat.player == player
        else seat
        for seat in record.seats
    )
    changes = tuple(
        RatedChange(change.seat, "", REMOVED_NAME, change.before, change.after)
        if change.ident == player
        else change
        for change in mark.changes
    )
    return msgspec.structs.replace(
        mark, changes=changes, record=msgspec.structs.replace(record, seats=seats)
    )


class NodesAlive(OperatorError):
    """A change the running nodes must not see happen under them."""


async def remove_player(store: Store, player: str, when: float | None = None) -> int:
    """Remove a player from the cluster (see the module docstring); in how many
    matches they were anonymised. Raises :class:`OperatorError` saying why not."""
    if player in STRENGTH_OF:
        raise OperatorError(f"{player} is a bot strength, not a player")
    if player in await store.removals():
        raise OperatorError(f"player {player!r} was removed already")
    live = await store.live_nodes()
    if live:
        raise NodesAlive(
            f"nodes {', '.join(sorted(live))} are alive: stop every node first (a running"
            " node holds the player and would register them again; each node removes"
            " them from its own file when it starts)"
        )
    history = await store.whole_history(player)
    known = await store.player_entries([player])
    if not known and not history and not await store.ratings([player]):
        raise OperatorError(f"this cluster knows no player {player!r}")
    marks = [anonymised(mark, player) for _, mark in history]
    for start in range(0, len(marks), _PAGE):
        await store.rewrite_results(marks[start : start + _PAGE])
    await store.remove_player(player, time.time() if when is None else when)
    return len(marks)
