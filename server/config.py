"""The server's settings, with the defaults a LAN host wants.

Every limit that keeps one client from hurting the others lives here, with
the reason for its default: a family's laptops never come near them, while a
runaway or hostile client on the same network is slowed, refused or closed.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

import protocol as wire
from engine import Ruleset
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
    #: connections one address may hold at once (refused with HTTP 429 beyond it);
    #: a household's laptops each have their own address and hold one or two
    max_connections_per_address: int = 64
    #: an IPv6 client counts, for every per-address limit, as its whole network of
    #: this prefix length, the server's own too (a device may use any address in its
    #: /64), and link-local ones as one per interface; 128 counts each address alone
    ipv6_prefix: int = 64
    #: whether the per-address limits (connections, new identities) also apply to
    #: loopback; off, so tests and ``tulips-loadtest`` on the server's own machine
    #: can open thousands of connections from 127.0.0.1
    limit_loopback: bool = False
    #: web page origins allowed to connect (``Origin`` header); "*" allows every
    #: page. Clients that send no ``Origin`` (every non-browser client) are never
    #: refused; a browser page not listed here gets HTTP 403.
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)
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
    #: seconds the server waits for a client to answer its close before dropping it
    close_timeout: float = 5.0
    #: frames one connection may send per second, with bursts of up to ``rate_burst``;
    #: every frame counts, good or bad. Beyond it the server reads the connection's
    #: frames only as fast as its rate allows (TCP slows the sender down); one that
    #: has ``rate_burst`` frames held back since its bucket was last half full is
    #: closed with 4008.
    rate_limit: float = 50.0
    rate_burst: int = 100
    #: bad frames a connection may send in a row before it is closed
    max_bad_frames: int = 20
    #: bytes the server holds for one client — its queued frames plus what the
    #: socket has not taken yet — before it closes it with 4005 (TOO_SLOW). A client
    #: that reads keeps next to nothing here (the kernel takes what it is sent);
    #: 128 KiB is two of the largest frames, and a hundred clients that stop reading
    #: cost the server about 20 MiB (``python -m server.bench``).
    max_outbox_bytes: int = 128 * 1024
    #: seconds a write to a client may wait for it to read before it is closed (4005)
    write_timeout: float = 60.0
    #: finished matches kept in memory and listed in the lobby
    keep_finished: int = 50
    #: new identities (``hello`` without a token) one address may make a minute, in
    #: bursts of as many; beyond it hello is answered ``rate_limited``. A household
    #: makes one per device and person, once.
    new_players_per_minute: float = 20.0
    #: seconds after which a player who has not connected since, and whom no kept
    #: match names, is forgotten (in memory and on disk); 30 days
    forget_players_after: float = 30 * 86400.0
    #: wrong join codes one address may try on one match before it is locked out
    join_code_tries: int = 5
    #: seconds an address is locked out of a match after too many wrong join codes
    join_code_lockout: float = 60.0
    #: seconds a shutdown waits for accepted actions to reach the disk and, side by
    #: side, for clients to answer the close (one that does not is cut off)
    stop_timeout: float = 5.0
    #: the cluster's Redis (``redis://HOST:6379/0``); None: one process, no Redis
    cluster: str | None = None
    #: the URL clients use to reach this node (redirects name it); None: ws://HOST:PORT
    public_url: str | None = None
    #: this node's id in the cluster; None: the one kept in ``data_dir``
    node_id: str | None = None
    #: the key the cluster's nodes share (``--cluster-key-file``), which seals
    #: what they keep in Redis; None: none yet (``--workers`` makes one)
    cluster_key: bytes | None = field(default=None, repr=False)
    #: Redis's password, given without the command line (``--redis-password-file``
    #: or ``TULIPS_REDIS_PASSWORD``); None: none, or the one in ``cluster``'s URL
    redis_password: str | None = field(default=None, repr=False)
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
    #: announce the server on the LAN (DNS-SD); never done for a loopback ``host``
    announce: bool = False
    #: the name it is announced under (None: "Gift of Tulips on <hostname>")
    announce_name: str | None = None
    #: serve wss:// with this certificate (PEM, chain after it) and key; None: ws://
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: make a self-signed certificate and key at those paths when they are missing
    tls_self_signed: bool = False
    #: ``--web``: the port that serves the terminal client to browsers; None: no browsers
    web_port: int | None = None
    #: browser sessions at once (each runs one client process)
    web_max_sessions: int = 8
    #: browser sessions one address (as the per-address limits count it) may hold
    web_sessions_per_address: int = 2
    #: seconds a browser tab may send nothing (no key, no resize) before it is closed
    web_tab_idle: float = 1800.0
    #: bytes of address space each browser tab's client may use (util-linux prlimit)
    web_tab_memory: int = 512 * 2**20
    #: connections one address may hold on the web port (loopback too: a browser
    #: opens up to six per server, plus a WebSocket per tab); more are closed at once
    web_max_connections_per_address: int = 32
    #: connections the web port holds at once, from everyone, so that it never
    #: takes the descriptors the game port needs
    web_max_connections: int = 256
    #: seconds from accepting a web connection to its first request head (TLS included)
    web_header_timeout: float = 10.0
    #: seconds a web connection may wait for its next request after a response
    web_keepalive_timeout: float = 15.0
    #: seconds a web connection lives, whatever it does, unless it is a tab's WebSocket
    web_connection_lifetime: float = 60.0
    #: the event loop ``tulips-server`` runs on: "asyncio", or "uvloop" (an optional extra)
    loop: str = "asyncio"
    #: the house rulesets offered besides the printed rules (``--ruleset``), by
    #: their names; "standard", the printed rules, is always offered
    rulesets: tuple[Ruleset, ...] = ()
    #: stop when this process ends (a program that runs a server of its own, as
    #: ``tulips play`` does, so that it is not left running if the program is killed)
    parent_pid: int | None = None

    def limits_address(self, address: str) -> bool:
        """Whether the per-address limits (connections, new identities) apply to
        a client at ``address`` (as :func:`server.peer.client_address` gives it)."""
        return self.limit_loopback or not _is_loopback(address)

    def limits(self, address: str) -> wire.ServerLimits:
        """The timings and thresholds ``welcome`` tells a client at ``address``:
        the per-address ones only where they apply to it."""
        limited = self.limits_address(address)
        return wire.ServerLimits(
            hello_timeout=self.hello_timeout,
            max_bad_frames=self.max_bad_frames,
            rate_limit=self.rate_limit,
            rate_burst=self.rate_burst,
            grace_period=self.grace_period,
            min_turn_timer=MIN_TURN_TIMER,
            max_turn_timer=MAX_TURN_TIMER,
            max_connections_per_address=self.max_connections_per_address if limited else None,
            new_players_per_minute=self.new_players_per_minute if limited else None,
            join_code_tries=self.join_code_tries,
            join_code_lockout=self.join_code_lockout,
        )


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
