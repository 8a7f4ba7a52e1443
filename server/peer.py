"""One connected client, as the server holds it: its number, who it is, and
a byte budget for what is on its way to it. Which match it is in is the
match's to say (the lobby asks), never the connection's.

Rooms never await a client: :meth:`Peer.send` queues a frame and returns.
Once the code that queued has run (``loop.call_soon``), the queue goes to the
socket in one write — everything one request caused for a client (its answer,
the events, a prompt) is one system call, in the order it was queued, and,
for a client that asked for ``batch``, one WebSocket frame. What an audience
is queued alike is framed once (:class:`Flusher`). Only when a client's
socket is full does a writer task of its own take over, wait for it to
drain, and end once the queue is written.

Invariant: the bytes held for one client — frames in its queue plus what the
transport has not yet handed to the kernel — stay within ``budget`` (one frame
is always let through, however large). A client that stops reading is closed
with 4005 (TOO_SLOW) as soon as one more frame would break the budget, or when
a write has waited ``write_timeout`` seconds for it, and everything held for
it is dropped. Pongs, which websockets writes on its own, are checked after
every read (:class:`TulipsConnection`), so a client that pings and never reads
is held to the same budget (give or take a 4 KiB read or two), and cut off if it carries
on once told to go. Every close goes through :meth:`Peer.close` or
:meth:`Peer.flush_and_close`, which cut the reason to what a close frame
holds and give up on a client that does not answer within ``close_timeout``
— or, when the client is closed for what it did (a bad frame, a flood, no
hello, not reading), within :data:`FAULT_CLOSE_TIMEOUT`: a client that ignores
the close it earned holds no connection for long.

A client's pings and pongs spend from its rate limit as its messages do
(:class:`PacedProtocol`, :meth:`TulipsConnection.pace`). :func:`address_key`
says what an address is, for every per-address limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from protocol import CloseCode, batch_frames

from .identity import Player
from .ratelimit import Pacer

__all__ = [
    "CLIENT_FAULTS",
    "FAULT_CLOSE_TIMEOUT",
    "MAX_CLOSE_REASON_BYTES",
    "Flusher",
    "PacedProtocol",
    "Peer",
    "TulipsConnection",
    "address_key",
    "client_address",
    "close_reason",
]

log = logging.getLogger(__name__)

#: RFC 6455 §5.5: a control frame's payload is at most 125 bytes, two of them the code.
MAX_CLOSE_REASON_BYTES = 123
#: Close codes that end a connection because of what its client did: websockets'
#: own (1002 protocol error, 1007 invalid data, 1009 too big) and the server's.
CLIENT_FAULTS = frozenset(
    {
        1002,
        1007,
        CloseCode.MESSAGE_TOO_BIG,
        CloseCode.PROTOCOL_VIOLATION,
        CloseCode.UNSUPPORTED_VERSION,
        CloseCode.HELLO_TIMEOUT,
        CloseCode.TOO_SLOW,
        CloseCode.RATE_LIMITED,
    }
)
#: Seconds the server waits for a client closed for a fault to answer the close:
#: a LAN answers in milliseconds, and a hostile client that reconnects at once
#: while ignoring each close would otherwise hold hundreds of closing connections.
FAULT_CLOSE_TIMEOUT = 0.5
#: Frames written to the socket in one go: a few largest frames, not the whole queue.
_BATCH_BYTES = 64 * 1024
#: Numbers the server's connections, from 1 (what a match knows a connection by).
_NUMBERS = itertools.count(1)


def close_reason(text: str) -> str:
    """``text`` cut to fit a close frame: at most 123 bytes of UTF-8, never
    splitting a character (whatever a client typed into a name or a field)."""
    data = text.encode("utf-8", "replace")
    if len(data) <= MAX_CLOSE_REASON_BYTES:
        return text
    cut = data[: MAX_CLOSE_REASON_BYTES - 3]  # room for "…" (3 bytes)
    return cut.decode("utf-8", "ignore") + "…"


def client_address(connection: ServerConnection, ipv6_prefix: int = 128) -> str:
    """The client's address as the per-address limits count it (see
    :func:`address_key`)."""
    remote, local = connection.remote_address, connection.local_address
    return address_key(
        _host(remote) if remote else "?", _host(local) if local else None, ipv6_prefix
    )


def _host(address: tuple[object, ...]) -> str:
    """A socket address's host, with its interface (``fe80::1%3``) when it has
    one: Python gives an IPv6 socket address as (host, port, flow, scope id)."""
    host = str(address[0])
    if len(address) == 4 and address[3] and "%" not in host:
        return f"{host}%{address[3]}"
    return host


#: Every link-local address, on any link: a neighbour may take any of them.
_LINK_LOCAL = ipaddress.IPv6Network("fe80::/10")


def address_key(host: str, local: str | None = None, ipv6_prefix: int = 128) -> str:
    """What the per-address limits count a client at ``host`` as, reached at the
    server's own address ``local``.

    An IPv4 address (an IPv4-mapped IPv6 address is written as IPv4) and
    loopback count one by one. Any other IPv6 address counts as its whole
    ``/ipv6_prefix`` network, as ``2001:db8:7:1::/64`` — the server's own
    network too: a home or a host is given a /64, and a device on it may take
    any address in it (SLAAC, privacy addresses), so counted one by one it could
    take every limit afresh. All the link-local addresses (fe80::/10) of one
    interface count as one, ``fe80::/10%eth0`` (the interface as ``host``, or
    else ``local``, names it; without one, every link-local address counts as
    one): anyone on the link may take any of them. So the IPv6 devices of one
    LAN share one budget, where IPv4 neighbours have one each. ``ipv6_prefix``
    128 counts every IPv6 address alone, link-local too: for a LAN whose
    devices are all trusted.
    """
    address, _, zone = host.partition("%")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return host
    if not isinstance(ip, ipaddress.IPv6Address):
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ipv6_prefix >= 128 or ip.is_loopback:
        return str(ip)
    if ip in _LINK_LOCAL:
        if not zone and local is not None:
            zone = local.partition("%")[2]
        return f"{_LINK_LOCAL}%{zone}" if zone else str(_LINK_LOCAL)
    return str(ipaddress.IPv6Network((ip, ipv6_prefix), strict=False))


def _closed_for_fault(connection: ServerConnection) -> bool:
    """Whether websockets has already sent a close for a fault of the client's
    (it fails a connection on a bad frame by itself)."""
    sent = connection.protocol.close_sent
    return sent is not None and sent.code in CLIENT_FAULTS


#: the opcodes of a message's frames (its first, then its continuations)
_DATA = frozenset({Opcode.TEXT, Opcode.BINARY, Opcode.CONT})


class PacedProtocol(ServerProtocol):
    """websockets' server protocol, charging every ping and pong the client
    sends, and every fragment of a message but its last, to its connection's
    :class:`~server.ratelimit.Pacer` before websockets acts on it (a whole
    message is charged once it is complete: :meth:`Pacer.admit`). Without the
    fragments, a message that never ends (empty continuation frames, on and on)
    would cost its sender nothing.

    websockets answers a ping inside the protocol, the moment it parses it, and
    has no hook for it (python-websockets/websockets#884: no public API; graft
    the logic onto the protocol): :meth:`TulipsConnection.pace` turns the
    protocol websockets made into one of these. Once a ping or a pong has made
    a flood, the rest are dropped unanswered: the connection is closed for it.
    """

    #: what every ping and pong is charged to (None: nothing is)
    pacer: Pacer | None = None
    #: a ping or a pong was charged since the connection last looked
    charged: bool = False
    #: a ping or a pong made a flood
    flooded: bool = False

    def recv_frame(self, frame: Frame) -> None:
        """Charge a ping, a pong or a fragment, then let websockets handle the frame."""
        pacer = self.pacer
        if pacer is not None and (
            frame.opcode is Opcode.PING
            or frame.opcode is Opcode.PONG
            or (not frame.fin and frame.opcode in _DATA)
        ):
            if self.flooded:
                return
            if not pacer.charge():
                self.flooded = True
                return
            self.charged = True
        super().recv_frame(frame)


class TulipsConnection(ServerConnection):
    """websockets' server connection, reading little at a time and telling its
    :class:`Peer` after each read.

    websockets parses every frame of a read at once, however many, and only
    then stops reading (``max_queue``): reads of asyncio's default 256 KiB could
    turn into 40,000 tiny frames waiting for a flooder's rate limit. Reads of
    ``READ_BYTES`` keep that to a few hundred. And websockets answers every
    ping with a pong by itself, from inside ``data_received``: without the hook,
    a client that pings and never reads could grow the server's write buffer
    without any :meth:`Peer.send`. When websockets fails the connection on a
    bad frame, the client gets :data:`FAULT_CLOSE_TIMEOUT` to answer the close
    before the socket is dropped (websockets alone would keep it until the
    handler's next send, or until the client hangs up).

    Once it is paced (:meth:`pace`), its pings and pongs count against its rate
    as its messages do, and a read is parsed ``FEED_BYTES`` at a time: past
    its tokens, the rest of the read waits, unparsed, until they are paid for.
    Parsing a ping costs the server about what answering it does, and a read
    over TLS can hold thousands.
    """

    #: Bytes taken from the socket per read (client frames are small).
    READ_BYTES = 4096
    #: Bytes of a read parsed at once on a paced connection: 85 pings at most.
    FEED_BYTES = 512

    # websockets' connection has some thirty attributes of its own: six more in
    # its dictionary would make it a bigger one (CPython shares a class's
    # dictionary keys up to 30), so these are slots.
    __slots__ = ("_backlog", "_drop_at", "_parsed", "_resume_at", "on_data", "on_flood")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: called after each chunk of bytes the client sent has been taken in
        self.on_data: Callable[[], None] | None = None
        #: called once, when the client's pings and pongs make a flood
        self.on_flood: Callable[[], None] | None = None
        #: drops the socket of a client failed for a fault that does not answer the close
        self._drop_at: asyncio.TimerHandle | None = None
        #: parses the rest of the read and reads again once the pings and pongs are paid for
        self._resume_at: asyncio.TimerHandle | None = None
        #: what the client sent that waits to be parsed, from ``_parsed`` on
        self._backlog = b""
        self._parsed = 0

    def pace(self, pacer: Pacer, on_flood: Callable[[], None]) -> None:
        """Charge every ping and pong the client sends to ``pacer``, which its
        messages spend from too: past its tokens, they are held back as its
        messages are (nothing more is parsed or read until they are paid for),
        and once they make a flood ``on_flood`` is called and nothing more is read."""
        protocol = self.protocol
        protocol.__class__ = PacedProtocol  # websockets makes the protocol: see PacedProtocol
        assert isinstance(protocol, PacedProtocol)
        protocol.pacer = pacer
        self.on_flood = on_flood

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Set up as websockets does, then read in small pieces."""
        super().connection_made(transport)
        if hasattr(transport, "max_size"):  # asyncio's selector transports' read size
            transport.max_size = self.READ_BYTES

    def data_received(self, data: bytes) -> None:
        """Take the client's bytes in (as far as they are paid for, once paced),
        then let the peer check its byte budget."""
        protocol = self.protocol
        if isinstance(protocol, PacedProtocol):
            if protocol.flooded:  # the parser may hold half a frame: parse nothing more
                return
            self._backlog, self._parsed = self._backlog[self._parsed :] + data, 0
            self._feed(protocol)
        else:
            self._take_in(data)
        if self.on_data is not None:
            self.on_data()

    def _take_in(self, data: bytes) -> None:
        super().data_received(data)
        if self._drop_at is None and self.state is State.CLOSING and _closed_for_fault(self):
            self._drop_at = self.loop.call_later(FAULT_CLOSE_TIMEOUT, self._drop)

    def _feed(self, protocol: PacedProtocol) -> None:
        """Parse the backlog a piece at a time while its pings and pongs are paid
        for; once they are owed, hold the rest and stop reading until they are
        paid for; once they made a flood, drop it, read no more and say so."""
        backlog = self._backlog
        while self._parsed < len(backlog) and self._resume_at is None:
            chunk = backlog[self._parsed : self._parsed + self.FEED_BYTES]
            self._parsed += len(chunk)
            self._take_in(chunk)
            if protocol.flooded:
                self._backlog, self._parsed = b"", 0
                self.transport.pause_reading()
                if self.on_flood is not None:
                    on_flood, self.on_flood = self.on_flood, None
                    on_flood()
                return
            if protocol.charged:
                protocol.charged = False
                assert protocol.pacer is not None
                wait = protocol.pacer.wait()
                if wait > 0:
                    self._resume_at = self.loop.call_later(wait, self._resume)
        if self._parsed >= len(backlog):
            self._backlog, self._parsed = b"", 0
        if self._resume_at is not None:  # again, if websockets let its queue read on
            self.transport.pause_reading()

    def _resume(self) -> None:
        """The pings and pongs are paid for, or should be: parse the rest, and
        read again — unless websockets itself holds reading (its queue of
        messages is full), or the client owes again."""
        self._resume_at = None
        protocol = self.protocol
        if not isinstance(protocol, PacedProtocol) or protocol.flooded:
            return
        assert protocol.pacer is not None
        wait = protocol.pacer.wait()
        if wait > 0:  # the messages in the queue spent the tokens that came meanwhile
            self._resume_at = self.loop.call_later(wait, self._resume)
            return
        self._feed(protocol)
        if self.on_data is not None:
            self.on_data()
        if self._resume_at is None and not protocol.flooded and not self.recv_messages.paused:
            self.transport.resume_reading()

    def eof_received(self) -> None:
        """The client is done sending: what waits to be parsed is taken in
        first, paid for or not (its close frame may be in it)."""
        protocol = self.protocol
        if self._parsed < len(self._backlog) and not (
            isinstance(protocol, PacedProtocol) and protocol.flooded
        ):
            rest, self._backlog, self._parsed = self._backlog[self._parsed :], b"", 0
            self._take_in(rest)
        super().eof_received()

    def _drop(self) -> None:
        if self.state is not State.CLOSED:
            self.transport.abort()

    def send_data(self) -> None:
        """Write what websockets has to send, as websockets does, but each run of
        frames in one write — a read full of pings is answered with one write,
        not one per pong — and nothing once the socket has failed or is being
        closed (asyncio would log a warning for every further write)."""
        pending: list[bytes] = []
        for data in self.protocol.data_to_send():
            if data:
                pending.append(data)
                continue
            self._write(pending)  # what came before the end of the stream
            pending = []
            if self.transport.can_write_eof():  # half-close, as websockets does
                with contextlib.suppress(Exception):  # uvloop may raise RuntimeError
                    self.transport.write_eof()
            else:
                self.transport.close()
        self._write(pending)

    def _write(self, chunks: list[bytes]) -> None:
        if chunks and not self.transport.is_closing():
            self.transport.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))

    def connection_lost(self, exc: Exception | None) -> None:
        """Closed: as websockets does, and no socket to drop or read any more."""
        if self._drop_at is not None:
            self._drop_at.cancel()
        if self._resume_at is not None:
            self._resume_at.cancel()
            self._resume_at = None
        self.on_flood = None
        self._backlog, self._parsed = b"", 0
        super().connection_lost(exc)


class Flusher:
    """Writes out every peer that queued frames, in one callback once the code
    that queued them has run (``loop.call_soon``): one callback per turn of the
    event loop, however many peers an action reached. One per server.

    While it writes, peers that were queued the very same frames (an audience:
    every spectator, every seat but one) share what is made of them — the
    ``batch`` and its WebSocket framing are made once, the same bytes written
    to each (:meth:`framed`)."""

    def __init__(self) -> None:
        self._due: list[Peer] = []
        #: during a run: the frames' ids -> (the frames, kept alive so that no id
        #: is reused meanwhile; their WebSocket frames, ready to write)
        self._made: dict[tuple[int, ...], tuple[tuple[bytes, ...], bytes]] | None = None

    def framed(self, frames: tuple[bytes, ...], batching: bool) -> bytes:
        """``frames`` as the bytes of their WebSocket frames (a server's: unmasked,
        no extension), batched if ``batching``; made once per run of the flusher."""
        made = self._made
        key = (int(batching), *map(id, frames))
        if made is not None:
            found = made.get(key)
            if found is not None:
                return found[1]
        messages = batch_frames(frames) if batching else frames
        data = b"".join(
            [Frame(Opcode.BINARY, message).serialize(mask=False) for message in messages]
        )
        if made is not None:
            made[key] = (frames, data)
        return data

    def add(self, peer: Peer) -> None:
        """Flush ``peer`` soon (it has not been added since its last flush)."""
        if not self._due:
            asyncio.get_running_loop().call_soon(self._run)
        self._due.append(peer)

    def _run(self) -> None:
        due, self._due = self._due, []
        self._made = {}
        try:
            for peer in due:
                try:
                    peer._flush()
                except Exception:  # one broken connection must not hold up the others
                    log.exception("writing to %r failed; closing it", peer)
                    peer.close(CloseCode.INTERNAL_ERROR, "internal error")
        finally:
            self._made = None


class Peer:
    """A WebSocket connection with its number, its player and its outbound queue."""

    __slots__ = (
        "_alone",
        "_close_timeout",
        "_closer",
        "_closing",
        "_flush_due",
        "_flusher",
        "_queue",
        "_queued",
        "_write_timeout",
        "_writer",
        "address",
        "batching",
        "budget",
        "connection",
        "id",
        "opened",
        "peak",
        "player",
        "received",
    )

    def __init__(
        self,
        connection: ServerConnection,
        budget: int,
        *,
        write_timeout: float = 60.0,
        close_timeout: float = 5.0,
        flusher: Flusher | None = None,
        ipv6_prefix: int = 128,
    ) -> None:
        """``flusher`` is shared by a server's peers (by default each has its own);
        ``ipv6_prefix`` is as in :func:`address_key`."""
        self.connection = connection
        #: the connection's number, unique in the process: what a match knows it by
        self.id = next(_NUMBERS)
        #: the client's address as the per-address limits count it (see :func:`address_key`)
        self.address = client_address(connection, ipv6_prefix)
        self.player: Player | None = None
        self.budget = budget
        #: the most bytes ever held for this client at once
        self.peak = 0
        #: frames of this client the server has read and acted on since hello
        self.received = 0
        self.opened = time.monotonic()
        self._write_timeout = write_timeout
        self._close_timeout = close_timeout
        self._queue: list[bytes] = []  # a deque holds 600 bytes even when empty
        self._queued = 0  # bytes in _queue
        self._flusher = flusher if flusher is not None else Flusher()
        #: what is queued leaves as ``batch`` frames (hello.features held ``batch``)
        self.batching = False
        self._alone = 0  # frames at the head of the queue that leave alone (the welcome)
        self._flush_due = False  # this peer is with the flusher
        self._closing = False
        self._closer: asyncio.Task[None] | None = None
        #: while the client's socket is full: the task that waits for it to drain
        #: and writes the rest (none otherwise: an idle connection holds no task)
        self._writer: asyncio.Task[None] | None = None
        if isinstance(connection, TulipsConnection):
            connection.on_data = self._check_budget

    def __repr__(self) -> str:
        who = self.player.name if self.player else "?"
        return f"<Peer {who} {self.connection.remote_address}>"

    @property
    def closing(self) -> bool:
        """Whether the server has started to close this connection."""
        return self._closing

    @property
    def held(self) -> int:
        """Bytes held for this client now: queued, plus the transport's unsent buffer."""
        return self._queued + self._unsent()

    def _unsent(self) -> int:
        transport = self.connection.transport
        return 0 if transport is None else transport.get_write_buffer_size()

    def send(self, frame: bytes) -> None:
        """Queue a frame; drop the client if holding it would break the budget."""
        if self._closing:
            return
        size = len(frame)
        transport = self.connection.transport  # self.held, inline: called for every frame
        held = self._queued + size + (0 if transport is None else transport.get_write_buffer_size())
        if held > self.budget and held > size:  # one frame always fits
            self._too_slow()
            return
        self._queue.append(frame)
        self._queued += size
        if held > self.peak:
            self.peak = held
        if not self._flush_due:
            self._flush_due = True
            self._flusher.add(self)

    def start_batching(self) -> None:
        """From now on, what is queued at once leaves as one ``batch`` frame
        (what is queued already — the welcome — leaves alone, as before)."""
        self.batching = True
        self._alone = len(self._queue)

    def send_all(self, frames: Sequence[bytes]) -> None:
        """:meth:`send` each of ``frames``, in order."""
        send = self.send
        for frame in frames:
            send(frame)

    def _flush(self) -> None:
        """Write what was queued since the last flush in one write to the socket.

        Called by the :class:`Flusher` soon after :meth:`send`, once the code
        that queued has run: everything one request caused for this client (its
        answer, the events, a prompt) leaves in one system call. A client whose
        socket is full (the transport has paused writing) is left to the writer
        task, which waits for it, within ``write_timeout``.
        """
        self._flush_due = False
        if self._writer is not None or not self._queue:
            return  # the writer task holds this client's frames until its socket drains
        connection = self.connection
        if connection.protocol.state is State.OPEN and not connection.paused:
            self._write_batch()
            if not self._queue and not connection.paused:
                return
        self._start_writer()

    def _start_writer(self) -> None:
        """Leave the rest of the queue to a task that waits for the socket."""
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    def _write_batch(self) -> None:
        """Queued frames, up to ``_BATCH_BYTES`` of them, in one write to the socket
        — as ``batch`` frames, when the client asked for them.

        asyncio's ``transport.write()`` sends at once when its buffer is empty, so
        frames written one by one would each be a system call; joined they are one.
        """
        queue = self._queue
        size = taken = 0
        for frame in queue:
            if size >= _BATCH_BYTES:
                break
            size += len(frame)
            taken += 1
        frames = queue[:taken]
        del queue[:taken]
        self._queued -= size
        assert not self.connection.protocol.extensions, "the server negotiates none"
        alone, self._alone = min(self._alone, len(frames)), max(0, self._alone - len(frames))
        framed = self._flusher.framed
        data = framed(tuple(frames[:alone]), False) if alone else b""
        data += framed(tuple(frames[alone:]), self.batching)
        # Written as websockets would (a server's frames are unmasked; without an
        # extension a data frame is its header and payload): the same bytes for
        # every receiver of the same frames. Only this batch is pending:
        # websockets writes its own frames (pongs, close) as it makes them, so
        # nothing of its own waits in data_to_send().
        self.connection.transport.write(data)

    def _check_budget(self) -> None:
        """After a read: the pongs websockets wrote may not break the budget either
        (the pongs for one read's pings, under ``READ_BYTES``, can overshoot it)."""
        held = self.held
        self.peak = max(self.peak, held)
        if held <= self.budget:
            return
        if self._closing:  # told to go, it still sends what it does not read: cut it off
            self.connection.transport.abort()
        else:
            self._too_slow()

    def _too_slow(self) -> None:
        log.warning("%r does not read what it is sent; closing", self)
        self.close(CloseCode.TOO_SLOW, "too many unread messages")

    def close(self, code: int, reason: str) -> None:
        """Close the connection with a documented code, without waiting.

        What is still queued is dropped; the close frame goes after what the
        transport already holds, and a client that does not answer within
        ``close_timeout`` is cut off, which frees the rest.
        """
        if self._closing:
            return
        self._closing = True
        self._drop_queue()
        self._closer = asyncio.get_running_loop().create_task(self._close(code, reason))

    def fail(self, frame: bytes, code: int, reason: str) -> None:
        """Send ``frame`` (the error that says why), then close with ``code``,
        without waiting: :meth:`flush_and_close` for code that cannot await
        (websockets' data path). Once the connection is closing, nothing."""
        if self._closing:
            return
        self.send(frame)
        self._closing = True
        self._closer = asyncio.get_running_loop().create_task(self.flush_and_close(code, reason))

    async def flush_and_close(self, code: int, reason: str, timeout: float = 2.0) -> None:
        """Write what is queued (within ``timeout``), then close."""
        self._closing = True
        if self._queue:
            self._start_writer()
        writer = self._writer
        try:
            if writer is not None:
                await asyncio.wait_for(asyncio.shield(writer), timeout)
        except TimeoutError:
            pass
        except asyncio.CancelledError:
            if writer is None or not writer.cancelled():  # we are cancelled: pass it on
                raise
        self._drop_queue()
        await self._close(code, reason)

    async def _close(self, code: int, reason: str) -> None:
        """The close handshake, bounded: websockets waits for the socket to drain
        before it times a close out, so a client that never reads would hold its
        buffers for ever."""
        timeout = self._close_timeout
        if code in CLIENT_FAULTS or _closed_for_fault(self.connection):
            timeout = min(timeout, FAULT_CLOSE_TIMEOUT)
        try:
            async with asyncio.timeout(timeout):
                await self.connection.close(code, close_reason(reason))
        except TimeoutError:
            log.info("%r did not answer the close; dropping it", self)
            self.connection.transport.abort()

    async def finish(self) -> None:
        """When the connection's task ends: see it closed, within ``close_timeout``.

        websockets closes a connection whose handler returns, but waits for
        the socket to drain first, without a timeout: a client that never reads
        would keep its task and its buffers for ever.
        """
        if self._closer is not None:
            await self._closer
        elif self.connection.state is not State.CLOSED:
            await self._close(CloseCode.NORMAL_CLOSURE, "")

    def _drop_queue(self) -> None:
        self._queue.clear()
        self._queued = 0

    async def _write_loop(self) -> None:
        """Write the queue out as the client's socket takes it, then end."""
        queue = self._queue
        connection = self.connection
        try:
            while queue:
                # A batch in one write (one syscall); then wait for the socket
                # to take it before writing more, so the queue — not the
                # transport — holds the rest, where the budget sees it.
                async with asyncio.timeout(self._write_timeout), connection.send_context():
                    self._write_batch()
        except ConnectionClosed:
            self._drop_queue()
        except TimeoutError:
            log.warning("%r has not read for %.0f s; closing", self, self._write_timeout)
            self.close(CloseCode.TOO_SLOW, "stopped reading")
        finally:
            self._writer = None

    def stop(self) -> None:
        """Drop what is queued and let the writer end (the connection is going).

        The writer, if one waits for the socket, is not cancelled (a cancelled
        task keeps its traceback, and with it this peer, in a reference cycle
        until the next full garbage collection): it ends when :meth:`finish`
        has closed the connection.
        """
        self._closing = True
        self._drop_queue()
        if isinstance(self.connection, TulipsConnection):
            self.connection.on_data = None
