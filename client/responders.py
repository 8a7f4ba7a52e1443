"""Asking every mDNS responder of one DNS-SD instance for its own records.

Multicast DNS caches records by name, not by who sent them: when two devices
answer for the same instance name (an impostor, or two servers that probed
at the same moment), or for the same host name (two servers on machines both
called ``kitchen``), a resolver that reads the shared cache can pair one
device's address with the other's TXT record — and its certificate
fingerprint. This module does not read that cache. It sends a *legacy
unicast* query (RFC 6762, section 6.7: a query from a port other than 5353)
for the instance's SRV and TXT records; every responder must answer it with
a packet of its own, sent straight back to the asking socket. Each packet
becomes one :class:`Reply`: the SRV, TXT and address records that device
gave, and nothing another device said.

Invariants: a reply holds only records from one packet of one source; a
packet that does not answer our query's id, or lacks the SRV or TXT record of
the instance, is not a reply. The socket is bound to one of the interface
addresses given and sends only there; every wait is bounded by ``window``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zeroconf import ServiceInfo

__all__ = ["MDNS_GROUP", "MDNS_PORT", "Reply", "ask_responders"]

log = logging.getLogger(__name__)

MDNS_GROUP = "224.0.0.251"
MDNS_PORT = 5353
#: The query is sent again this many seconds after the first, in case a packet was lost.
RESEND_AFTER = 0.25


@dataclass(frozen=True, slots=True)
class Reply:
    """One responder's answer for one instance: its own records, from one packet."""

    #: the address the packet came from
    source: str
    #: the full instance name (``Friday table._tulips._tcp.local.``)
    name: str
    #: the SRV record's host name and port
    server: str
    port: int
    #: the raw TXT record
    txt: bytes
    #: the addresses (packed, 4 or 16 bytes) it gave for ``server``
    addresses: tuple[bytes, ...]

    def service_info(self, service_type: str) -> ServiceInfo:
        """This reply as a zeroconf ``ServiceInfo``, for code that reads those."""
        from zeroconf import ServiceInfo

        return ServiceInfo(
            service_type,
            self.name,
            port=self.port,
            properties=self.txt,
            server=self.server,
            addresses=list(self.addresses),
        )


# zeroconf keeps its DNS record and packet classes importable from the package
# "for backwards compat" (its __init__.py) without listing them in __all__.


def _query(name: str, query_id: int) -> bytes:
    from zeroconf import DNSOutgoing, DNSQuestion  # type: ignore[attr-defined]
    from zeroconf.const import _CLASS_IN, _FLAGS_QR_QUERY, _TYPE_SRV, _TYPE_TXT

    out = DNSOutgoing(_FLAGS_QR_QUERY, multicast=False, id_=query_id)
    for kind in (_TYPE_SRV, _TYPE_TXT):
        out.add_question(DNSQuestion(name, kind, _CLASS_IN))
    (packet,) = out.packets()
    return packet


def _read(data: bytes, source: str, name: str, query_id: int) -> Reply | None:
    """The reply in one packet, or None when it is not an answer to our query."""
    from zeroconf import (  # type: ignore[attr-defined]
        DNSAddress,
        DNSIncoming,
        DNSService,
        DNSText,
    )

    message = DNSIncoming(data, (source, MDNS_PORT))
    if not message.valid or message.is_query() or message.id != query_id:
        return None
    records = message.answers()
    wanted = name.lower()
    service = next(
        (r for r in records if isinstance(r, DNSService) and r.name.lower() == wanted), None
    )
    text = next((r for r in records if isinstance(r, DNSText) and r.name.lower() == wanted), None)
    if service is None or text is None:
        return None
    host = service.server.lower()
    addresses = tuple(
        dict.fromkeys(
            r.address for r in records if isinstance(r, DNSAddress) and r.name.lower() == host
        )
    )
    return Reply(source, service.name, service.server, service.port, text.text, addresses)


class _Collector(asyncio.DatagramProtocol):
    def __init__(
        self, name: str, query_id: int, seen: dict[Reply, None], on_reply: Callable[[Reply], None]
    ) -> None:
        self.name = name
        self.query_id = query_id
        self.seen = seen
        self.on_reply = on_reply

    def datagram_received(self, data: bytes, addr: tuple[str | int, ...]) -> None:
        try:
            reply = _read(data, str(addr[0]), self.name, self.query_id)
        except Exception as exc:  # another device's damaged packet: not ours to raise
            log.debug("ignoring a packet from %s: %s", addr[0], exc)
            return
        if reply is not None and reply not in self.seen:
            self.seen[reply] = None
            self.on_reply(reply)

    def error_received(self, exc: Exception) -> None:
        log.debug("mDNS query for %r: %s", self.name, exc)


def _socket(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        sock.bind((address, 0))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(address))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
    except BaseException:
        sock.close()
        raise
    return sock


async def _listen(
    loop: asyncio.AbstractEventLoop, sock: socket.socket, collector: _Collector
) -> tuple[asyncio.DatagramTransport, _Collector]:
    transport, _ = await loop.create_datagram_endpoint(lambda: collector, sock=sock)
    return transport, collector


def _ignore(reply: Reply) -> None:
    pass


async def ask_responders(
    name: str,
    addresses: Sequence[str],
    window: float = 1.0,
    *,
    on_reply: Callable[[Reply], None] = _ignore,
) -> list[Reply]:
    """Every answer to a legacy unicast query for instance ``name``, sent from each
    IPv4 interface address in ``addresses`` and collected for ``window`` seconds
    (in the order they came; the same answer twice counts once). ``on_reply`` is
    called with each as it comes. An address that cannot send (no multicast
    there) is skipped."""
    loop = asyncio.get_running_loop()
    query_id = secrets.randbelow(0xFFFF) + 1  # legacy unicast answers echo it
    seen: dict[Reply, None] = {}
    collectors: list[tuple[asyncio.DatagramTransport, _Collector]] = []
    try:
        for address in addresses:
            try:
                sock = _socket(address)
            except OSError as exc:
                log.debug("cannot ask on %s: %s", address, exc)
                continue
            collector = _Collector(name, query_id, seen, on_reply)
            collectors.append(await _listen(loop, sock, collector))
        packet = _query(name, query_id)
        for attempt in range(2):  # the same bytes twice; answers are deduplicated
            for transport, _ in collectors:
                with contextlib.suppress(OSError):
                    transport.sendto(packet, (MDNS_GROUP, MDNS_PORT))
            await asyncio.sleep(RESEND_AFTER if attempt == 0 else max(window - RESEND_AFTER, 0))
    finally:
        for transport, _ in collectors:
            transport.close()
    return list(seen)
