"""How a browser tab's client shows the game server which browser it plays for.

``tulips-server --web`` runs one terminal client per browser tab, on the
server's own machine: every such client reaches the game port from loopback.
So that the per-address limits count each tab as its browser's address, not
all of them as the machine's, the front gives each tab's client a pass in its
environment (:data:`TAB_PASS_ENV`, never on its command line), and the client
shows it in its WebSocket handshake (:data:`TAB_PASS_HEADER`) — to a server on
loopback only: the pass means nothing to any other server, which ignores it.
"""

from __future__ import annotations

__all__ = ["TAB_PASS_ENV", "TAB_PASS_HEADER"]

#: The environment variable that gives a browser tab's client its pass.
TAB_PASS_ENV = "TULIPS_TAB_PASS"
#: The handshake header by which a browser tab's client shows its pass.
TAB_PASS_HEADER = "Tulips-Tab-Pass"
