"""A wss:// client that checks the server by its certificate's fingerprint.

A server started with `tulips-server --tls` has a self-signed certificate:
no authority vouches for it, so the client encrypts without one and then
compares the SHA-256 of the certificate it was shown with the fingerprint the
server printed at start-up (or announced on the LAN), before it says hello.
Then it plays a 3-seat match against two bots, as examples/plain_client.py
does. It needs only `websockets` and `msgpack`.

    python examples/tls_client.py wss://HOST:8765 SHA256:3F:A0:... [name]
"""

import asyncio
import hashlib
import ssl
import sys

import msgpack
import websockets


def fingerprint(der: bytes) -> str:
    """SHA256: and the certificate's digest in hex pairs, as tulips-server prints it."""
    digest = hashlib.sha256(der).hexdigest().upper()
    return "SHA256:" + ":".join(digest[i : i + 2] for i in range(0, 64, 2))


async def play(url: str, pinned: str, name: str) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False  # no authority: the fingerprint check below replaces both
    context.verify_mode = ssl.CERT_NONE
    async with websockets.connect(url, ssl=context) as ws:
        der = ws.transport.get_extra_info("ssl_object").getpeercert(binary_form=True)
        if fingerprint(der) != pinned.upper():
            sys.exit(f"refusing {url}: its certificate is {fingerprint(der)}, not {pinned}")
        print(f"certificate checked: {fingerprint(der)}")
        next_id = 0

        async def send(type_: str, **fields: object) -> None:
            nonlocal next_id
            next_id += 1
            await ws.send(msgpack.packb({"v": 1, "type": type_, "id": next_id, **fields}))

        await send("hello", client="tls-client/1", name=name)
        async for frame in ws:
            msg = msgpack.unpackb(frame)
            kind = msg.get("type")
            if kind == "error" and msg["code"] == "decision_taken":
                continue  # our act came too late; the newer prompt is already here
            elif kind == "error":
                sys.exit(f"error {msg['code']}: {msg['message']}")
            elif kind == "welcome":
                bots = [{"seat": 1, "strength": "easy"}, {"seat": 2, "strength": "easy"}]
                await send("create_match", name=f"{name} vs bots", seats=3, bots=bots)
            elif kind == "joined":
                await send("start")
            elif kind == "prompt":
                await send("act", action=msg["actions"][0], seq=msg["seq"])
            elif kind == "event" and msg["event"]["kind"] == "match_ended":
                print(f"winners: {msg['event']['scoring']['winners']}")
                return


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    asyncio.run(play(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "tls"))
