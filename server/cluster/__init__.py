"""Beyond one process: server nodes that share one lobby through Redis.

A match lives in exactly one node, which runs it and stores its actions on its
own disk; nothing of a match's hot path crosses the network. What the nodes
share lives in Redis, the way Colyseus shares presence: player identities
(token hashes only), the match directory (what ``list_matches`` shows, and
each match's node), which node each connected player is on, lobby updates
(``match_update`` over pub/sub) and the nodes' heartbeats.

- :mod:`.entries`: the values kept in Redis, and their MessagePack form;
- :mod:`.signing`: the key the nodes share, and the seal (HMAC-SHA256) on
  every value they keep in Redis: a node believes nothing else, so one who
  can write to Redis cannot send players to a listener of theirs;
- :mod:`.freshness`: the stamp on every message a node publishes, and the
  guard that refuses one sent again (a seal says who, not when);
- :mod:`.credentials`: secrets given without the command line (Redis's
  password, the key ``--workers`` hands on), taken out of the environment;
- :mod:`.redirect`: where a request for a match must go (pure decisions);
- :mod:`.store`: every Redis command, in one place (the only module that
  imports ``redis``);
- :mod:`.node`: this node's view of the cluster — heartbeat, directory cache,
  pub/sub, recovery after Redis comes back;
- :mod:`.lobby`: :class:`~server.cluster.lobby.ClusterLobby`, the lobby with
  the cluster hooked in;
- :mod:`.ratings`: the shared ratings, history and totals (one transaction
  per finished match, whichever node applies it);
- :mod:`.workers`: ``--workers N``: N nodes on one machine sharing one port.
- :mod:`.admin`: ``tulips-cluster``: list the nodes, forget one gone for good;
  and :mod:`.operations`, its tools for the shared ratings and players
  (export, reset, remove).

Nothing here is imported unless ``--cluster`` is given: a single server never
imports ``redis``.
"""
