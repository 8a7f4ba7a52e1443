"""Where a request for a match must go, decided from what this node knows.

Pure functions over the node's cache of the cluster: the directory entries of
other nodes' matches, the nodes whose heartbeat is alive (with their URLs),
and whether Redis answers now. Each returns the error the client is sent
(``elsewhere`` with the URL, ``node_unavailable``, ``cluster_unavailable`` or
``no_such_match``), so the lobby raises it and the one error mapping sends it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import protocol as wire
from protocol import ErrorCode

from .entries import DirectoryEntry, NodeInfo

__all__ = ["available", "for_match", "home_of", "to_entry", "to_node"]


def available(entry: DirectoryEntry, live: Mapping[str, NodeInfo], store_ok: bool) -> bool:
    """Whether a client sent to the entry's node now would get there."""
    return store_ok and entry.node in live


def to_entry(
    entry: DirectoryEntry, live: Mapping[str, NodeInfo], store_ok: bool
) -> wire.ProtocolError:
    """The error that sends a client to the entry's match, or says why it cannot go."""
    return to_node(entry.match, entry.node, live, store_ok)


def to_node(
    match_id: str, node_id: str, live: Mapping[str, NodeInfo], store_ok: bool
) -> wire.ProtocolError:
    """The error that sends a client to the node that holds a match (the
    directory's, or a finished match's as its record says), or says why it cannot go."""
    node = live.get(node_id)
    if not store_ok:
        return wire.ProtocolError(
            ErrorCode.CLUSTER_UNAVAILABLE,
            f"match {match_id} is on another node, and this node cannot reach the"
            " cluster's store now; try again later",
            match=match_id,
        )
    if node is None:
        return wire.ProtocolError(
            ErrorCode.NODE_UNAVAILABLE,
            f"match {match_id} is on node {node_id}, which is not answering now;"
            " it is kept, and resumes when its node is back",
            match=match_id,
        )
    return wire.ProtocolError(
        ErrorCode.ELSEWHERE,
        f"match {match_id} is on node {node_id}: connect to {node.url}",
        url=node.url,
        match=match_id,
        fingerprint=node.fingerprint,
    )


def for_match(
    match_id: str,
    entries: Mapping[str, DirectoryEntry],
    live: Mapping[str, NodeInfo],
    store_ok: bool,
) -> wire.ProtocolError:
    """The error for a request naming a match this node does not run."""
    entry = entries.get(match_id)
    if entry is None or entry.gone:
        if not store_ok:  # it may well be on a node we have not heard of yet
            return wire.ProtocolError(
                ErrorCode.CLUSTER_UNAVAILABLE,
                f"no match {match_id!r} here, and this node cannot reach the cluster's"
                " store to look further; try again later",
                match=match_id,
            )
        return wire.ProtocolError(ErrorCode.NO_SUCH_MATCH, f"no match {match_id!r}")
    return to_entry(entry, live, store_ok)


def home_of(player_id: str, entries: Iterable[DirectoryEntry]) -> DirectoryEntry | None:
    """The newest match elsewhere in which the player holds a seat they have
    not left: where a reconnecting player is put back (as ``Lobby.home_of``)."""
    homes = [e for e in entries if not e.gone and player_id in e.homes]
    return max(homes, key=lambda e: e.created, default=None)
