"""Issue 29 without a network: one responder's packet is one entry, and the
browser keys its entries by announcement, never by name.

The packets are built in memory with zeroconf's own writer, and the browser is
fed replies by a stand-in for the query: no socket, no sleep.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence

import pytest
from zeroconf import DNSAddress, DNSOutgoing, DNSService, DNSText  # type: ignore[attr-defined]
from zeroconf.const import (
    _CLASS_IN,
    _FLAGS_AA,
    _FLAGS_QR_QUERY,
    _FLAGS_QR_RESPONSE,
    _TYPE_A,
    _TYPE_SRV,
    _TYPE_TXT,
)

from client import responders
from client.discovery import ServerBrowser
from client.responders import Reply, _query, _read
from protocol.lan import SERVICE_TYPE, Announcement, fingerprint

NAME = f"Friday table.{SERVICE_TYPE}"
REAL_FP = fingerprint(b"the real certificate")
OTHER_FP = fingerprint(b"another certificate")


def _txt(fp: str) -> bytes:
    """A TXT record's wire form, as zeroconf writes it."""
    text = b""
    for key, value in Announcement(versions=(1,), tls=True, fingerprint=fp).to_txt().items():
        item = f"{key}={value}".encode()
        text += bytes([len(item)]) + item
    return text


def _answer(
    query_id: int,
    *,
    host: str = "kitchen.local.",
    addresses: Sequence[tuple[str, str]] = (("kitchen.local.", "10.0.0.1"),),
    fp: str = REAL_FP,
    txt: bool = True,
    flags: int = _FLAGS_QR_RESPONSE | _FLAGS_AA,
) -> bytes:
    out = DNSOutgoing(flags, multicast=False, id_=query_id)
    out.add_answer_at_time(DNSService(NAME, _TYPE_SRV, _CLASS_IN, 120, 0, 0, 8765, host), 0)
    if txt:
        out.add_answer_at_time(DNSText(NAME, _TYPE_TXT, _CLASS_IN, 4500, _txt(fp)), 0)
    for owner, address in addresses:
        record = DNSAddress(owner, _TYPE_A, _CLASS_IN, 120, socket.inet_aton(address))
        out.add_additional_answer(record)
    (packet,) = out.packets()
    return packet


def test_the_query_asks_for_the_instances_srv_and_txt_from_a_legacy_port() -> None:
    """Two questions, the id given (a legacy unicast answer echoes it)."""
    from zeroconf import DNSIncoming  # type: ignore[attr-defined]

    message = DNSIncoming(_query(NAME, 4242))
    assert message.is_query() and message.id == 4242
    assert {(q.name, q.type) for q in message.questions} == {(NAME, _TYPE_SRV), (NAME, _TYPE_TXT)}


def test_one_packet_is_one_reply_with_only_the_addresses_of_its_own_host() -> None:
    """Issue 29 ("never merge one announcement's address with another's fingerprint"):
    addresses for another host name in the same packet are not this server's."""
    packet = _answer(7, addresses=(("kitchen.local.", "10.0.0.1"), ("attic.local.", "10.0.0.9")))
    reply = _read(packet, "10.0.0.1", NAME, 7)
    assert reply is not None
    assert (reply.source, reply.server, reply.port) == ("10.0.0.1", "kitchen.local.", 8765)
    assert reply.addresses == (socket.inet_aton("10.0.0.1"),)
    info = reply.service_info(SERVICE_TYPE)
    assert info.parsed_scoped_addresses() == ["10.0.0.1"]
    assert Announcement.from_txt(info.properties).fingerprint == REAL_FP


@pytest.mark.parametrize(
    ("packet", "why"),
    [
        (_answer(8), "another query's id"),
        (_answer(7, txt=False), "no TXT record"),
        (_answer(7, flags=_FLAGS_QR_QUERY), "a query, not an answer"),
        (b"\x00\x07garbage", "not a DNS packet"),
    ],
)
def test_a_packet_that_does_not_answer_our_query_is_no_reply(packet: bytes, why: str) -> None:
    """Nothing else on the port becomes an entry."""
    assert _read(packet, "10.0.0.1", NAME, 7) is None, why


def _reply(source: str, fp: str) -> Reply:
    packet = _answer(1, addresses=(("kitchen.local.", source),), fp=fp)
    reply = _read(packet, source, NAME, 1)
    assert reply is not None
    return reply


def _fake_query(
    rounds: list[list[Reply]],
) -> Callable[..., object]:
    async def ask(
        name: str,
        addresses: Sequence[str],
        window: float = 1.0,
        *,
        on_reply: Callable[[Reply], None],
    ) -> list[Reply]:
        replies = rounds.pop(0)
        for reply in replies:
            on_reply(reply)
        return replies

    return ask


async def test_two_devices_answering_for_one_name_are_two_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29: "two servers with the same name are shown as two entries with their
    addresses" — each with its own fingerprint; a round in which one no longer
    answers leaves the other; a round with no answer at all changes nothing."""
    rounds = [
        [_reply("10.0.0.1", REAL_FP), _reply("10.0.0.66", OTHER_FP)],
        [_reply("10.0.0.1", REAL_FP)],
        [],
    ]
    monkeypatch.setattr(responders, "ask_responders", _fake_query(rounds))
    browser = ServerBrowser()
    await browser._resolve(SERVICE_TYPE, NAME)
    listed = [(s.name, s.host, s.fingerprint) for s in browser.servers]
    assert listed == [
        ("Friday table", "10.0.0.1", REAL_FP),
        ("Friday table", "10.0.0.66", OTHER_FP),
    ]
    assert len({s.key for s in browser.servers}) == 2
    await browser._resolve(SERVICE_TYPE, NAME)
    assert [(s.host, s.fingerprint) for s in browser.servers] == [("10.0.0.1", REAL_FP)]
    await browser._resolve(SERVICE_TYPE, NAME)
    assert [(s.host, s.fingerprint) for s in browser.servers] == [("10.0.0.1", REAL_FP)]
