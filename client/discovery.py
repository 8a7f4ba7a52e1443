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

An announcement this module cannot read (another program's, or a damaged
one) is left out and logged at debug level, never raised. Browsing only
sends mDNS queries on the interfaces given (by name or address), or on every
interface when none is.
"""

from __future__ import annotations

import asyncio
import contextlib
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

#: How long to wait for one announced server's records, in milliseconds.
RESOLVE_MS = 3000


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


class ServerBrowser:
    """Follows the servers on the LAN while open (``async with``)."""

    def __init__(self, interfaces: Sequence[str] = ()) -> None:
        """``interfaces``: names or addresses to browse on (default: all)."""
        self.interfaces = tuple(interfaces)
        self._servers: dict[str, ServerInfo] = {}
        self._changed = asyncio.Event()
        self._zeroconf: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = 0.0

    @property
    def servers(self) -> tuple[ServerInfo, ...]:
        """The servers seen so far and not withdrawn, by name."""
        return tuple(sorted(self._servers.values(), key=lambda s: (s.name.lower(), s.host)))

    async def __aenter__(self) -> ServerBrowser:
        from zeroconf import InterfaceChoice
        from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

        addresses = interface_addresses(self.interfaces) if self.interfaces else None
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
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
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

        if state_change is ServiceStateChange.Removed:
            if self._servers.pop(name, None) is not None:
                self._changed.set()
            return
        task = asyncio.get_running_loop().create_task(self._resolve(service_type, name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, service_type: str, name: str) -> None:
        from zeroconf.asyncio import AsyncServiceInfo

        assert self._zeroconf is not None
        info = AsyncServiceInfo(service_type, name)
        if not await info.async_request(self._zeroconf.zeroconf, RESOLVE_MS):
            log.debug("ignoring %r: it did not answer with its address and port", name)
            return
        try:
            old = self._servers.get(name)
            seen = old.seen_after if old else time.monotonic() - self._started
            server = ServerInfo.from_service(info, seen)
        except BadAnnouncement as exc:
            log.debug("ignoring an announcement: %s", exc)
            return
        if self._servers.get(name) != server:
            self._servers[name] = server
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
