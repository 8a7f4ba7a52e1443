"""The server's settings, with the defaults a LAN host wants."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import protocol as wire
from protocol.limits import MAX_TURN_TIMER, MIN_TURN_TIMER

__all__ = ["ServerConfig"]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything ``tulips-server`` can be told; tests build one directly."""

    host: str = "0.0.0.0"
    port: int = 8765
    #: where matches are stored; None keeps everything in memory only
    data_dir: Path | None = None
    #: SQLite's synchronous setting: "FULL" survives power loss, "NORMAL" crashes only
    sync: str = "FULL"
    name: str = "tulips-server"
    max_matches: int = 1000
    max_connections: int = 5000
    #: seconds a hello may take before the connection is closed
    hello_timeout: float = 10.0
    #: seconds a seat's player may be gone before a bot plays for them
    grace_period: float = 30.0
    #: seconds a bot waits before it acts, so people can follow the table
    bot_delay: float = 0.0
    #: how long a *hard* bot thinks per decision, in milliseconds
    bot_think_ms: float = 300.0
    #: websockets keep-alive: ping every ``ping_interval`` s, drop after ``ping_timeout`` s
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 20.0
    #: frames one connection may send per second (burst allowed up to ``rate_burst``)
    rate_limit: float = 50.0
    rate_burst: int = 100
    #: bad frames a connection may send before it is closed
    max_bad_frames: int = 20
    #: frames queued for a client that does not read before it is dropped
    max_outbox: int = 1000
    #: finished matches kept in memory and listed in the lobby
    keep_finished: int = 50
    #: seconds a shutdown waits for accepted actions to reach the disk
    stop_timeout: float = 5.0
    #: the cluster's Redis (``redis://HOST:6379/0``); None: one process, no Redis
    cluster: str | None = None
    #: the URL clients use to reach this node (redirects name it); None: ws://HOST:PORT
    public_url: str | None = None
    #: this node's id in the cluster; None: the one kept in ``data_dir``
    node_id: str | None = None
    #: seconds between a cluster node's heartbeats (three missed: taken for dead)
    heartbeat: float = 1.0
    #: nodes ``--workers`` starts on this machine (sharing ``port``)
    workers: int = 1
    #: which of them this process is (None: not a worker)
    worker: int | None = None
    #: more ports to listen on besides ``port`` (a worker's own)
    extra_ports: tuple[int, ...] = ()
    #: listen with SO_REUSEPORT, so several processes share ``port``
    reuse_port: bool = False

    def limits(self) -> wire.ServerLimits:
        """The timings and thresholds ``welcome`` tells every client."""
        return wire.ServerLimits(
            hello_timeout=self.hello_timeout,
            max_bad_frames=self.max_bad_frames,
            rate_limit=self.rate_limit,
            rate_burst=self.rate_burst,
            grace_period=self.grace_period,
            min_turn_timer=MIN_TURN_TIMER,
            max_turn_timer=MAX_TURN_TIMER,
        )
