"""The server's settings, with the defaults a LAN host wants.

Every limit that keeps one client from hurting the others lives here, with
the reason for its default: a family's laptops never come near them, while a
runaway or hostile client on the same network is slowed, refused or closed.

A field ``tulips-server`` can be told is declared once, with
:func:`~server.settings.setting`: its default, its help and its flag; the
command line, ``--help`` and the README's table of options are built from it.
The other fields are for tests and for the server's own use.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

import protocol as wire
from engine import Ruleset
from engine.analysis import DEFAULT_DEALS
from protocol.limits import MAX_TURN_TIMER, MIN_TURN_TIMER

from . import settings as read
from .settings import setting

__all__ = [
    "GROUPS",
    "MIN_RATE_BURST",
    "REDIS_PASSWORD_ENV",
    "WEB_PORT",
    "ServerConfig",
    "rate_burst",
]

#: The groups of options ``--help`` lists apart (:attr:`Setting.group
#: <server.settings.Setting.group>`), by title, with what they are for.
GROUPS = {"cluster": "several nodes sharing one lobby through Redis (README: Architecture)"}

#: Redis's password (``requirepass``), for a node given it in the environment.
REDIS_PASSWORD_ENV = "TULIPS_REDIS_PASSWORD"

#: The smallest burst ``--rate-limit`` allows (twice the rate, but never fewer):
#: a client that reconnects sends its hello and a few requests at once.
MIN_RATE_BURST = 10
#: ``--web`` without a port: the one after the game's default port.
WEB_PORT = 8766


def rate_burst(rate_limit: float) -> int:
    """The burst ``--rate-limit`` gives: twice the rate, rounded up, at least
    :data:`MIN_RATE_BURST`."""
    return max(MIN_RATE_BURST, math.ceil(rate_limit * 2))


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything ``tulips-server`` can be told; tests build one directly."""

    host: str = setting("0.0.0.0", "address to listen on")
    port: int = setting(8765, "0 picks a free port", parse=read.port)
    #: where matches are stored; None keeps everything in memory only (--no-storage)
    data_dir: Path | None = setting(
        None,
        "where matches are stored",
        parse=Path,
        command_line_default=Path(platformdirs.user_data_dir("gift-of-tulips")),
        readme_default="your user data directory",
    )
    #: SQLite's synchronous setting: "FULL" survives power loss, "NORMAL" crashes only
    sync: str = setting(
        "FULL",
        "full: every action survives a power cut; normal: survives a crash (faster)",
        choices={"full": "FULL", "normal": "NORMAL"},
    )
    #: what the command line's server logs (Python's logging level)
    log_level: str = setting(
        "INFO", "what is logged", choices=("DEBUG", "INFO", "WARNING", "ERROR")
    )
    #: stop when this process ends (a program that runs a server of its own, as
    #: ``tulips play`` does, so that it is not left running if the program is killed)
    parent_pid: int | None = setting(
        None,
        "stop when process PID ends: for a program that runs a server of its own "
        "(tulips play does), so that the server does not outlive it",
        parse=read.positive_int,
        metavar="PID",
    )
    #: the name in ``welcome`` (--name sets it, and :attr:`announce_name`)
    name: str = "tulips-server"
    max_matches: int = setting(1000, "open and running matches at most", parse=read.positive_int)
    max_connections: int = setting(5000, "connected clients at most", parse=read.positive_int)
    #: connections one address may hold at once (refused with HTTP 429 beyond it);
    #: a household's laptops each have their own address and hold one or two
    max_connections_per_address: int = setting(
        64,
        "connections one address may hold at once; more are refused with HTTP 429 "
        "(default: %(default)s). Loopback (127.0.0.1, ::1) is not limited, so that "
        "tulips-loadtest can run on the server's own machine",
        parse=read.positive_int,
        metavar="N",
    )
    #: an IPv6 client counts, for every per-address limit, as its whole network of
    #: this prefix length, the server's own too (a device may use any address in its
    #: /64), and link-local ones as one per interface; 128 counts each address alone
    ipv6_prefix: int = setting(
        64,
        "an IPv6 client counts, for the per-address limits, as its whole /BITS "
        "network, the server's own LAN included, and every link-local address of one "
        "interface as one, since a device may pick any address in its /64: the IPv6 "
        "devices of one LAN share one budget (default: %(default)s; 128 counts each "
        "address alone, for a LAN whose devices you all trust)",
        parse=read.ipv6_prefix,
        metavar="BITS",
    )
    #: whether the per-address limits (connections, new identities) also apply to
    #: loopback; off, so tests and ``tulips-loadtest`` on the server's own machine
    #: can open thousands of connections from 127.0.0.1
    limit_loopback: bool = False
    #: web page origins allowed to connect (``Origin`` header); "*" allows every
    #: page. Clients that send no ``Origin`` (every non-browser client) are never
    #: refused; a browser page not listed here gets HTTP 403.
    allowed_origins: tuple[str, ...] = setting(
        (),
        "a web page origin allowed to connect, e.g. http://tulips.lan:8080 (repeat "
        "for more; * allows every page). Browsers send their page's origin: any other is "
        "refused with HTTP 403. Programs that send no Origin are never refused",
        flag="--allow-origin",
        parse=read.origin,
        metavar="URL",
    )
    #: seconds a hello may take before the connection is closed
    hello_timeout: float = 10.0
    grace_period: float = setting(
        30.0, "seconds before a bot plays for a player who is gone", parse=read.seconds
    )
    #: seconds a bot waits before it acts, so people can follow the table
    bot_delay: float = setting(0.0, "seconds a bot waits before it acts", parse=read.seconds)
    bot_think_ms: float = setting(
        300.0, "milliseconds a hard bot searches per decision", parse=read.seconds
    )
    #: post-game analyses computed at once, each in a worker process of its own
    #: that runs at a lower priority than the server; more wait in a queue
    max_analyses: int = setting(
        1,
        "post-game analyses computed at once, each in a low-priority worker process "
        "(default: %(default)s); more wait in line",
        parse=read.workers,
        metavar="N",
    )
    #: analyses that may wait in line; beyond, a request is answered analysis_busy
    analysis_queue: int = setting(
        32,
        "post-game analyses that may wait in line (default: %(default)s); "
        "beyond, a request is refused with analysis_busy",
        parse=read.positive_int,
        metavar="N",
    )
    #: analyses one player (all their devices) may have waiting or being computed
    #: at once, so that one client cannot fill the queue on a game night
    analyses_per_player: int = setting(
        2,
        "post-game analyses one player, on all their devices, may have waiting or "
        "being computed at once (default: %(default)s); beyond, their next request "
        "is refused with analysis_busy",
        parse=read.positive_int,
        metavar="N",
    )
    #: deals of the unseen cards each decision of an analysis is valued over
    analysis_deals: int = setting(
        DEFAULT_DEALS,
        "deals of the unseen cards a post-game analysis values each decision over "
        "(default: %(default)s); more is steadier and slower",
        parse=read.positive_int,
        metavar="N",
    )
    #: websockets keep-alive: ping every ``ping_interval`` s, drop after ``ping_timeout`` s
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 20.0
    #: seconds the server waits for a client to answer its close before dropping it
    close_timeout: float = 5.0
    #: frames one connection may send per second, with bursts of up to ``rate_burst``
    #: (the command line makes it :func:`rate_burst` of the rate); every frame counts,
    #: good or bad. Beyond it the server reads the connection's frames only as fast
    #: as its rate allows (TCP slows the sender down); one that has more than
    #: ``rate_burst`` frames held back since its bucket was last half full is
    #: closed with 4008 (:class:`server.ratelimit.Pacer`).
    rate_limit: float = setting(
        50.0,
        "frames a second one connection may send, in bursts of up to twice that, rounded"
        f" up (at least {MIN_RATE_BURST}); every frame counts, good or bad, pings, pongs"
        " and each fragment of a message included. Past it the server reads that"
        " connection no faster than that; one with more than a whole burst of frames"
        " held back since its allowance was last half saved up is closed (4008)",
        parse=read.rate,
    )
    rate_burst: int = 100
    #: bad frames a connection may send in a row before it is closed
    max_bad_frames: int = 20
    #: bytes the server holds for one client — its queued frames plus what the
    #: socket has not taken yet — before it closes it with 4005 (TOO_SLOW). A client
    #: that reads keeps next to nothing here (the kernel takes what it is sent);
    #: 128 KiB is two of the largest frames, and a hundred clients that stop reading
    #: cost the server about 20 MiB (``python -m server.lab.bench``).
    max_outbox_bytes: int = 128 * 1024
    #: seconds a write to a client may wait for it to read before it is closed (4005)
    write_timeout: float = 60.0
    #: finished matches kept in memory and listed in the lobby
    keep_finished: int = 50
    #: older finished matches revived from storage for a replay or an analysis
    #: and kept at hand (the most recently asked); never listed
    keep_revived: int = 16
    #: new identities (``hello`` without a token) one address may make a minute, in
    #: bursts of as many; beyond it hello is answered ``rate_limited``. A household
    #: makes one per device and person, once.
    new_players_per_minute: float = setting(
        20.0,
        "new identities (hello without a token) one address may make a minute "
        "(default: %(default)s); loopback is not limited",
        parse=read.rate,
        metavar="N",
    )
    #: seconds (days on the command line) after which a player who has not
    #: connected since, and whom no kept match names, is forgotten (in memory and
    #: on disk); 30 days
    forget_players_after: float = setting(
        30 * 86400.0,
        "forget a player who has not connected for this many days and whom no kept "
        "match names; their token stops working",
        parse=read.days,
        metavar="DAYS",
        unit=86400,
    )
    #: wrong join codes one address may try on one match before it is locked out
    join_code_tries: int = 5
    #: seconds an address is locked out of a match after too many wrong join codes
    join_code_lockout: float = 60.0
    stop_timeout: float = setting(
        5.0,
        "seconds a shutdown (Ctrl-C, SIGTERM) waits for the disk to store what was"
        " already accepted (nothing not stored by then was acknowledged) and, side by side,"
        " for clients to answer the close; one that does not is cut off",
        parse=read.seconds,
    )
    #: the cluster's Redis (``redis://HOST:6379/0``); None: one process, no Redis
    cluster: str | None = setting(
        None,
        "join the cluster of every node naming this Redis (redis://HOST:6379/0);"
        " give Redis's password with --redis-password-file or in the environment"
        f" ({REDIS_PASSWORD_ENV}), not in this URL: a command line is visible to every"
        " user of the machine (ps)",
        parse=read.redis_url,
        metavar="REDIS_URL",
        group="cluster",
    )
    #: the URL clients use to reach this node (redirects name it); None: ws://HOST:PORT
    public_url: str | None = setting(
        None,
        "the URL clients should use to reach this node (default: ws://HOST:PORT);"
        " with --workers, each worker's is this one with the worker's own port",
        parse=read.ws_url,
        group="cluster",
    )
    #: this node's id in the cluster; None: the one kept in ``data_dir``
    node_id: str | None = setting(
        None,
        "this node's id (default: the one kept in the data directory, made on first start)",
        parse=read.node_id,
        group="cluster",
    )
    #: the key the cluster's nodes share (``--cluster-key-file``), which seals
    #: what they keep in Redis; None: none yet (``--workers`` makes one)
    cluster_key: bytes | None = field(default=None, repr=False)
    #: Redis's password, given without the command line (``--redis-password-file``
    #: or ``TULIPS_REDIS_PASSWORD``); None: none, or the one in ``cluster``'s URL
    redis_password: str | None = field(default=None, repr=False)
    heartbeat: float = setting(
        1.0,
        "seconds between heartbeats; a node is taken for dead after three missed",
        parse=read.heartbeat,
        group="cluster",
    )
    #: nodes ``--workers`` starts on this machine (sharing ``port``)
    workers: int = setting(
        1,
        "start this many nodes on this machine sharing --port (needs --cluster;"
        " not with --web, whose tabs must reach the node that let them in);"
        " worker I also listens on --port + 1 + I and keeps its data in DATA_DIR/node-I",
        parse=read.workers,
        group="cluster",
    )
    #: which of them this process is (None: not a worker); ``--workers`` gives it
    worker: int | None = setting(None, read.HIDDEN, parse=int, group="cluster")
    #: more ports to listen on besides ``port`` (a worker's own)
    extra_ports: tuple[int, ...] = ()
    #: listen with SO_REUSEPORT, so several processes share ``port``
    reuse_port: bool = False
    #: announce the server on the LAN (DNS-SD); never done for a loopback ``host``
    announce: bool = setting(
        False,
        "do not announce the server on the LAN (it never is on 127.0.0.1)",
        flag="--no-announce",
        command_line_default=True,
    )
    #: the name it is announced under (None: "Gift of Tulips on <hostname>"); the
    #: command line checks it and sets :attr:`name` to it too
    announce_name: str | None = setting(
        None,
        "the server's name on the LAN (default: Gift of Tulips on HOSTNAME), "
        "also sent to clients in welcome",
        flag="--name",
        metavar="NAME",
    )
    #: serve wss:// with this certificate (PEM, chain after it) and key; None: ws://
    tls_cert: Path | None = setting(
        None, "serve wss:// with this PEM certificate", parse=Path, metavar="FILE"
    )
    tls_key: Path | None = setting(
        None, "the unencrypted PEM key of --tls-cert", parse=Path, metavar="FILE"
    )
    #: make a self-signed certificate and key at those paths when they are missing (--tls)
    tls_self_signed: bool = False
    #: the port that serves the terminal client to browsers; None: no browsers
    web_port: int | None = setting(
        None,
        f"also serve the game to browsers on PORT (default {WEB_PORT}): each tab"
        " runs the terminal client as its own player (needs the [web] extra)",
        flag="--web",
        parse=read.port,
        metavar="PORT",
        const=WEB_PORT,
    )
    #: browser sessions at once (each runs one client process)
    web_max_sessions: int = setting(
        8,
        "browser tabs playing at once; each is a client process",
        parse=read.positive_int,
        metavar="N",
    )
    #: browser sessions one address (as the per-address limits count it) may hold
    web_sessions_per_address: int = setting(
        2,
        "browser tabs one address may have playing at once, loopback too; its next "
        "tab is refused (HTTP 503) and the other seats stay for others",
        parse=read.positive_int,
        metavar="N",
    )
    #: seconds (minutes on the command line) a browser tab may send nothing (no
    #: key, no resize) before it is closed
    web_tab_idle: float = setting(
        1800.0,
        "a browser tab that sends nothing (no key, no resize) this long is closed and "
        "its client process ended; reloading the tab resumes the player",
        parse=read.minutes,
        metavar="MINUTES",
        unit=60,
    )
    #: bytes (MiB on the command line) of address space each browser tab's client
    #: may use (util-linux prlimit)
    web_tab_memory: int = setting(
        512 * 2**20,
        "address space each browser tab's client process may use, in MiB (a normal "
        "tab needs under 200); past it the tab's client fails and its tab closes. Needs "
        "util-linux's prlimit",
        parse=read.positive_int,
        metavar="MIB",
        unit=2**20,
    )
    #: connections one address may hold on the web port (loopback too: a browser
    #: opens up to six per server, plus a WebSocket per tab); more are closed at once
    web_max_connections_per_address: int = setting(
        32,
        "connections one address may hold on the web port, loopback too; more are "
        "closed at once (HTTP 429)",
        parse=read.positive_int,
        metavar="N",
    )
    #: connections the web port holds at once, from everyone, so that it never
    #: takes the descriptors the game port needs
    web_max_connections: int = setting(
        256,
        "connections the web port holds at once, from everyone; more are closed at "
        "once (HTTP 503), so that it never takes what the game port needs",
        parse=read.positive_int,
        metavar="N",
    )
    web_header_timeout: float = setting(
        10.0,
        "a web connection that has not sent its first request head this long after "
        "it was accepted (TLS handshake included) is closed",
        parse=read.positive_seconds,
        metavar="SECONDS",
    )
    web_keepalive_timeout: float = setting(
        15.0,
        "a web connection with no new request this long after its last response is "
        "closed; a tab's WebSocket is never cut by it",
        parse=read.positive_seconds,
        metavar="SECONDS",
    )
    web_connection_lifetime: float = setting(
        60.0,
        "a web connection is closed this long after it was accepted, whatever it "
        "does, unless it is a tab's WebSocket",
        parse=read.positive_seconds,
        metavar="SECONDS",
    )
    loop: str = setting(
        "asyncio",
        "the event loop; uvloop needs pip install 'gift-of-tulips[uvloop]'",
        choices=("asyncio", "uvloop"),
    )
    #: the house rulesets offered besides the printed rules (``--ruleset``), by
    #: their names; "standard", the printed rules, is always offered
    rulesets: tuple[Ruleset, ...] = ()

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
