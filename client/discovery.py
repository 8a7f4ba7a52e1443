"""Finding Gift of Tulips servers on the LAN (DNS-SD over multicast DNS).

Servers announce themselves as ``_tulips._tcp.local.`` instances
(:mod:`protocol.lan`; PROTOCOL.md, "Finding a server"). This module browses
for them and hands back typed :class:`ServerInfo` records, for the terminal
client and for any custom client::

    from client.discovery import browse

    for server in await browse(timeout=3):
        print(server.name, server.url, server.players, server.fingerprint)

or, to follow the LAN as servers come and go::

    async with ServerBrowser() as browser:
        async for servers in browser.changes():
            ...

An entry is one announcement as one device made it: each instance the
browse finds is resolved by asking every device that answers for it
(:mod:`client.responders`), and each answer becomes its own
:class:`ServerInfo`, keyed by :attr:`ServerInfo.key` — instance name, port,
addresses and fingerprint — never by the name alone. Two devices announcing
the same name are two entries, each with its own address and fingerprint; one
device's address is never paired with another's fingerprint.

An announced fingerprint says only what that device claims: anyone on the LAN
can announce anything. Connect pinned to it only where that is enough (the
terminal client treats it as a hint and still asks the player).

An announcement this module cannot read (another program's, or a damaged
one) is left out and logged at debug level, never raised. Browsing only
sends mDNS queries on the interfaces given (by name or address), or on every
IPv4 interface when none is.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from protocol import SUPPORTED_VERSIONS
from protocol.lan import SERVICE_TYPE, Announcement

if TYPE_CHECKING:
    from zeroconf import ServiceInfo, ServiceStateChange, Zeroconf
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

__all__ = [
    "BadAnnouncement",
    "ServerBrowser",
    "ServerInfo",
    "browse",
    "follow",
    "interface_addresses",
]

log = logging.getLogger(__name__)

#: How long to collect the answers for one announced instance, in seconds.
RESOLVE_WINDOW = 1.0


class BadAnnouncement(ValueError):
    """An announcement that is not a usable Gift of Tulips server."""


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """One server found on the LAN, as it announced itself."""

    #: the name it announces (``Gift of Tulips on kitchen``, or its ``--name``)
    name: str
    #: the address to connect to (IPv4 preferred) and its port
    host: str
    port: int
    #: every address it announced
    addresses: tuple[str, ...]
    #: protocol versions it speaks
    versions: tuple[int, ...]
    #: whether it speaks TLS (``wss://``) and, if it said, its certificate's fingerprint
    tls: bool
    fingerprint: str | None
    open_seats: int
    open_matches: int
    matches: int
    players: int
    #: seconds after browsing began that it was first seen
    seen_after: float = 0.0

    @property
    def url(self) -> str:
        """``ws://host:port`` or ``wss://host:port``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'wss' if self.tls else 'ws'}://{host}:{self.port}"

    @property
    def key(self) -> str:
        """What tells this announcement apart from any other: name, scheme, port,
        addresses and fingerprint (two servers called alike have different keys)."""
        scheme = "wss" if self.tls else "ws"
        addresses = ",".join(sorted(self.addresses))
        return "\n".join((self.name, scheme, str(self.port), addresses, self.fingerprint or ""))

    @property
    def compatible(self) -> bool:
        """Whether it speaks a protocol version this client speaks."""
        return bool(set(self.versions) & set(SUPPORTED_VERSIONS))

    def to_json(self) -> dict[str, Any]:
        """A plain dict for ``tulips servers --json`` (with ``url``)."""
        data = asdict(self)
        data["url"] = self.url
        data["addresses"] = list(self.addresses)
        data["versions"] = list(self.versions)
        return data

    @classmethod
    def from_service(cls, info: ServiceInfo, seen_after: float = 0.0) -> ServerInfo:
        """Read a resolved DNS-SD service; raises :class:`BadAnnouncement`."""
        suffix = "." + SERVICE_TYPE
        if not info.name.endswith(suffix) or info.port is None or not 0 < info.port < 65536:
            raise BadAnnouncement(f"{info.name!r}: no usable port ({info.port!r})")
        addresses = tuple(info.parsed_scoped_addresses())
        if not addresses:
            raise BadAnnouncement(f"{info.name!r}: no address")
        try:
            announcement = Announcement.from_txt(info.properties)
        except ValueError as exc:
            raise BadAnnouncement(f"{info.name!r}: {exc}") from None
        name = info.name.removesuffix(suffix)
        if not name.isprintable():
            raise BadAnnouncement(f"{info.name!r}: its name holds control characters")
        host = min(addresses, key=lambda a: ":" in a)  # IPv4 first
        return cls(
            name=name,
            host=host,
            port=info.port,
            addresses=addresses,
            versions=announcement.versions,
            tls=announcement.tls,
            fingerprint=announcement.fingerprint,
            open_seats=announcement.open_seats,
            open_matches=announcement.open_matches,
            matches=announcement.matches,
            players=announcement.players,
            seen_after=seen_after,
        )


def interface_addresses(names: Sequence[str]) -> list[str]:
    """The IP addresses of interfaces given by name (``eth0``) or address;
    raises :class:`ValueError` naming one that this machine does not have."""
    import ifaddr

    adapters = ifaddr.get_adapters()
    result: list[str] = []
    for name in names:
        with contextlib.suppress(ValueError):
            ipaddress.ip_address(name)
            result.append(name)
            continue
        found = [
            ip.ip if isinstance(ip.ip, str) else ip.ip[0]
            for adapter in adapters
            if name in (adapter.nice_name, adapter.name)
            for ip in adapter.ips
            if isinstance(ip.ip, str)  # IPv4: mDNS over IPv6 needs indexes; v4 is enough here
        ]
        if not found:
            known = ", ".join(sorted({a.nice_name for a in adapters}))
            raise ValueError(
                f"no interface {name!r} with an IPv4 address (this machine has: {known})"
            )
        result.extend(found)
    return result


def _ipv4_addresses() -> list[str]:
    """Every IPv4 address of this machine (what zeroconf browses on by default)."""
    import ifaddr

    return [
        ip.ip
        for adapter in ifaddr.get_adapters()
        for ip in adapter.ips
        if isinstance(ip.ip, str) and ip.network_prefix != 32
    ]


class ServerBrowser:
    """Follows the servers on the LAN while open (``async with``).

    State: ``_servers`` maps each instance name to its entries (by
    :attr:`ServerInfo.key`), one per device that answered for it; only the
    resolving task of that name replaces them, and a withdrawn name drops them."""

    def __init__(self, interfaces: Sequence[str] = (), *, window: float = RESOLVE_WINDOW) -> None:
        """``interfaces``: names or addresses to browse on (default: all);
        ``window``: seconds to collect the answers for one instance."""
        self.interfaces = tuple(interfaces)
        self.window = window
        self._servers: dict[str, dict[str, ServerInfo]] = {}
        self._changed = asyncio.Event()
        self._zeroconf: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._resolving: dict[str, asyncio.Task[None]] = {}
        self._ask_on: list[str] = []
        self._started = 0.0

    @property
    def servers(self) -> tuple[ServerInfo, ...]:
        """The servers seen so far and not withdrawn, by name (then address)."""
        found = [server for entries in self._servers.values() for server in entries.values()]
        return tuple(
            sorted(found, key=lambda s: (s.name.lower(), s.host, s.port, s.fingerprint or ""))
        )

    async def __aenter__(self) -> ServerBrowser:
        from zeroconf import InterfaceChoice
        from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

        addresses = interface_addresses(self.interfaces) if self.interfaces else None
        self._ask_on = [
            a for a in (addresses or _ipv4_addresses()) if ipaddress.ip_address(a).version == 4
        ]
        self._started = time.monotonic()
        self._zeroconf = AsyncZeroconf(interfaces=addresses or InterfaceChoice.All)
        self._browser = AsyncServiceBrowser(
            self._zeroconf.zeroconf, SERVICE_TYPE, handlers=[self._on_change]
        )
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop browsing."""
        tasks = list(self._resolving.values())
        self._resolving.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._browser is not None:
            await self._browser.async_cancel()
            self._browser = None
        if self._zeroconf is not None:
            await self._zeroconf.async_close()
            self._zeroconf = None

    def _on_change(
        self,
        zeroconf: Zeroconf,
        service_type: str,
        name: str,
        state_change: ServiceStateChange,
    ) -> None:
        from zeroconf import ServiceStateChange

        pending = self._resolving.pop(name, None)
        if pending is not None:
            pending.cancel()  # what it would read is older than this change
        if state_change is ServiceStateChange.Removed:
            if self._servers.pop(name, None) is not None:
                self._changed.set()
            return
        task = asyncio.get_running_loop().create_task(self._resolve(service_type, name))
        self._resolving[name] = task
        task.add_done_callback(lambda done: self._forget_task(name, done))

    def _forget_task(self, name: str, task: asyncio.Task[None]) -> None:
        if self._resolving.get(name) is task:
            del self._resolving[name]

    async def _resolve(self, service_type: str, name: str) -> None:
        """Ask every device answering for ``name``; each answer is one entry, listed
        as it comes. When the window closes, the entries of ``name`` are exactly
        the answers of this round (none at all: the old ones stay)."""
        from .responders import Reply, ask_responders

        fresh: dict[str, ServerInfo] = {}

        def take(reply: Reply) -> None:
            try:
                server = ServerInfo.from_service(reply.service_info(service_type))
            except BadAnnouncement as exc:
                log.debug("ignoring an announcement: %s (from %s)", exc, reply.source)
                return
            except Exception as exc:  # records zeroconf cannot make a ServiceInfo of
                log.debug("ignoring an announcement of %r from %s: %r", name, reply.source, exc)
                return
            entries = self._servers.setdefault(name, {})
            previous = entries.get(server.key)
            seen = previous.seen_after if previous else time.monotonic() - self._started
            server = dataclasses.replace(server, seen_after=seen)
            fresh[server.key] = server
            if previous != server:
                entries[server.key] = server
                self._changed.set()

        try:
            await ask_responders(name, self._ask_on, self.window, on_reply=take)
        finally:
            if not self._servers.get(name):
                self._servers.pop(name, None)
        if not fresh:
            log.debug("ignoring %r: nothing usable answered with its address and port", name)
        elif self._servers.get(name) != fresh:
            self._servers[name] = fresh
            self._changed.set()

    async def changes(self) -> AsyncIterator[tuple[ServerInfo, ...]]:
        """The servers now, then again every time a server comes, goes or changes."""
        yield self.servers
        while True:
            await self._changed.wait()
            self._changed.clear()
            yield self.servers


async def browse(
    timeout: float = 3.0, *, interfaces: Sequence[str] = (), count: int | None = None
) -> list[ServerInfo]:
    """The servers found within ``timeout`` seconds (sooner once ``count`` are found)."""
    async with ServerBrowser(interfaces) as browser:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                async for servers in browser.changes():
                    if count is not None and len(servers) >= count:
                        break
        return list(browser.servers)


async def follow(interfaces: Sequence[str] = ()) -> AsyncIterator[tuple[ServerInfo, ...]]:
    """The servers on the LAN now, then again whenever they change (until closed)."""
    async with ServerBrowser(interfaces) as browser:
        async for servers in browser.changes():
            yield servers
