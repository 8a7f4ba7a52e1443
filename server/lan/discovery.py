"""Announcing the server on the LAN with DNS-SD over multicast DNS (zeroconf).

While the server runs, :class:`Announcer` keeps one ``_tulips._tcp.local.``
instance registered — its name, port, addresses and a TXT record saying which
protocol versions it speaks, whether it speaks TLS (and its certificate's
fingerprint) and how busy it is (:class:`protocol.lan.Announcement`) — and
withdraws it (mDNS "goodbye") when the server stops.

Invariants:

- It speaks only on the interfaces the server listens on
  (:func:`announce_addresses`): a server bound to a loopback address starts
  no zeroconf at all and sends nothing to the network; one bound to
  ``0.0.0.0`` uses the machine's non-loopback IPv4 interfaces (``::`` adds
  IPv6 ones); one bound to a specific address, that address's interface only.
- The TXT record follows the lobby: it is read once every ``check_every``
  seconds, and re-announced when what it says changed, at most once every
  ``min_gap`` seconds, so a busy lobby does not flood the LAN.
- A name already announced by another device is not taken from it: zeroconf
  probes first and announces this server as ``NAME-2`` (``-3`` …) instead,
  and the log says so at WARNING, with the name it took.
- Nothing here can stop the server from serving: registration runs in the
  background, failures are logged, and :meth:`Announcer.stop` is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from protocol import SUPPORTED_VERSIONS
from protocol.lan import SERVICE_TYPE, Announcement

from ..match.info import MatchInfo, Status

if TYPE_CHECKING:  # zeroconf is imported only by a server that announces
    from zeroconf import ServiceInfo
    from zeroconf.asyncio import AsyncZeroconf

__all__ = ["Announcer", "announce_addresses", "default_instance_name", "lobby_announcement"]

log = logging.getLogger("server.discovery")

#: The longest DNS-SD instance name (one DNS label), in bytes of UTF-8.
MAX_INSTANCE_BYTES = 63


def default_instance_name() -> str:
    """``Gift of Tulips on <hostname>`` (the host name without its domain)."""
    return f"Gift of Tulips on {socket.gethostname().split('.')[0] or 'this computer'}"


def instance_label(name: str) -> str:
    """``name`` as a DNS-SD instance label: printable, at most 63 bytes of UTF-8."""
    clean = "".join(ch for ch in name if ch.isprintable()).strip() or default_instance_name()
    return clean.encode()[:MAX_INSTANCE_BYTES].decode(errors="ignore").strip()


def announce_addresses(host: str) -> list[str]:
    """The addresses to announce on for a server bound to ``host``; empty for
    loopback (and for a host that does not resolve)."""
    if host in ("", "0.0.0.0"):
        return _interface_addresses(ipv6=False)
    if host == "::":
        return _interface_addresses(ipv6=True)
    try:
        found = {
            str(info[4][0]) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        }
    except (OSError, UnicodeError):
        return []
    return sorted(a for a in found if not ipaddress.ip_address(a.split("%")[0]).is_loopback)


def _interface_addresses(*, ipv6: bool) -> list[str]:
    import ifaddr  # comes with zeroconf; only servers that announce need it

    addresses: list[str] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            text = ip.ip if isinstance(ip.ip, str) else ip.ip[0]
            address = ipaddress.ip_address(text)
            if address.is_loopback or address.is_link_local:
                continue
            if address.version == 4 or ipv6:
                addresses.append(text)
    return addresses


def lobby_announcement(
    matches: Iterable[MatchInfo], players: int, *, fingerprint: str | None, tls: bool
) -> Announcement:
    """What the TXT record says about a lobby with these matches and connected players.

    Open seats are the free seats of open matches without a join code: the
    seats anyone on the LAN could take now."""
    open_matches = open_seats = count = 0
    for match in matches:
        if match.status is Status.FINISHED:
            continue
        count += 1
        if match.status is Status.OPEN and not match.settings.tutorial:  # never listed
            open_matches += 1
            if match.settings.join_code is None:
                open_seats += match.free_seats
    return Announcement(
        versions=tuple(SUPPORTED_VERSIONS),
        tls=tls,
        fingerprint=fingerprint,
        open_seats=open_seats,
        open_matches=open_matches,
        matches=count,
        players=players,
    )


class Announcer:
    """Keeps one server's DNS-SD instance on the LAN while it runs."""

    def __init__(
        self,
        *,
        name: str,
        port: int,
        addresses: list[str],
        status: Callable[[], Announcement],
        check_every: float = 1.0,
        min_gap: float = 2.0,
    ) -> None:
        if not addresses:
            raise ValueError("an Announcer needs at least one address to announce on")
        self.instance = instance_label(name)
        self.port = port
        self.addresses = addresses
        self.status = status
        self.check_every = check_every
        self.min_gap = min_gap
        #: what was last announced (None before the first registration)
        self.announced: Announcement | None = None
        #: the instance name on the LAN: ``instance``, or ``instance-2`` etc. when
        #: another device already announced that name (logged at WARNING)
        self.registered_name: str | None = None
        self._zeroconf: AsyncZeroconf | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start announcing in the background (probing for a free name takes a second)."""
        from zeroconf import IPVersion
        from zeroconf.asyncio import AsyncZeroconf

        versions = {ipaddress.ip_address(a.split("%")[0]).version for a in self.addresses}
        ip_version = (
            IPVersion.All if versions == {4, 6} else IPVersion.V6Only if 6 in versions else None
        )
        try:
            self._zeroconf = AsyncZeroconf(interfaces=list(self.addresses), ip_version=ip_version)
        except Exception:  # e.g. no multicast on these interfaces: serve on, unannounced
            log.exception("cannot announce on the LAN (%s)", ", ".join(self.addresses))
            return
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        from zeroconf import NonUniqueNameException

        zeroconf = self._zeroconf
        assert zeroconf is not None
        current = self.status()
        info = self._info(f"{self.instance}.{SERVICE_TYPE}", current)
        try:
            await (await zeroconf.async_register_service(info, allow_name_change=True))
        except NonUniqueNameException:
            log.error("another device announces %r; not announcing this server", self.instance)
            return
        except Exception:  # the LAN is a courtesy: the server serves on regardless
            log.exception("announcing on the LAN failed")
            return
        self.registered_name = info.name
        self.announced = current
        taken = info.name.removesuffix("." + SERVICE_TYPE)
        if taken != self.instance:  # zeroconf probed, found the name in use, and renamed
            log.warning(
                "another server on the LAN is called %r; this one is announced as %r"
                " (players see both names: start it with another --name to choose its own)",
                self.instance,
                taken,
            )
        log.info(
            "announced on the LAN as %r (%s) on %s",
            taken,
            SERVICE_TYPE,
            ", ".join(self.addresses),
        )
        last = time.monotonic()
        while True:
            await asyncio.sleep(self.check_every)
            current = self.status()
            if current == self.announced or time.monotonic() - last < self.min_gap:
                continue
            try:
                await (await zeroconf.async_update_service(self._info(info.name, current)))
            except Exception:
                log.exception("updating the LAN announcement failed")
                continue
            self.announced, last = current, time.monotonic()
            log.debug("LAN announcement updated: %s", current)

    def _info(self, name: str, announcement: Announcement) -> ServiceInfo:
        from zeroconf import ServiceInfo

        return ServiceInfo(
            SERVICE_TYPE,
            name,
            port=self.port,
            properties=announcement.to_txt(),
            server=f"{socket.gethostname().split('.')[0] or 'tulips'}.local.",
            parsed_addresses=[a.split("%")[0] for a in self.addresses],
        )

    async def stop(self, timeout: float = 3.0) -> None:
        """Withdraw the announcement (goodbye packets) and close, within ``timeout`` s."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        zeroconf, self._zeroconf = self._zeroconf, None
        if zeroconf is None:
            return
        try:
            async with asyncio.timeout(timeout):
                if self.registered_name is not None:
                    await zeroconf.async_unregister_all_services()
                await zeroconf.async_close()
        except TimeoutError:
            log.warning("withdrawing the LAN announcement took over %.0f s; gave up", timeout)
        except Exception:
            log.exception("withdrawing the LAN announcement failed")
