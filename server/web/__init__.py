"""``tulips-server --web``: the terminal client, served to browsers on the LAN.

Needs the ``web`` extra (textual-serve, aiohttp); the server imports this
package only when ``--web`` is given.
"""

from __future__ import annotations

from .front import WebError, WebFront, lan_address, loopback_url

__all__ = ["WebError", "WebFront", "lan_address", "loopback_url"]
