"""Which web pages may open a tab: the Origin check of the browser front.

A browser sends the page's origin with every WebSocket. The front's own page
is served under one of the names and addresses the server is known by: its
own addresses (loopback, the LAN ones, the one it is bound to), ``localhost``,
this machine's host name and its mDNS name (``NAME.local``), and the origins
the operator allows with ``--allow-origin``. Only those may start a player.

The request's own ``Host`` is never the reference: a page on another site
whose name has been pointed at this server's address (DNS rebinding) sends
``Host: evil.example`` and ``Origin: http://evil.example`` alike.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["OriginPolicy", "own_names"]


def own_names(host: str, extra: Iterable[str] = ()) -> set[str]:
    """The names and addresses a server bound to ``host`` is known by (lower
    case, IPv6 without brackets): ``extra`` (its mDNS name, say) included."""
    from server.lan.discovery import announce_addresses

    from .front import lan_address

    names = {"localhost", "127.0.0.1", "::1", *(name.lower().rstrip(".") for name in extra)}
    if host not in ("", "0.0.0.0", "::"):
        names.add(host.lower())
    names.update(address.split("%")[0] for address in announce_addresses(host or "0.0.0.0"))
    lan = lan_address()
    if lan is not None:
        names.add(lan)
    hostname = socket.gethostname().lower()
    if hostname:
        names.update({hostname, f"{hostname.split('.')[0]}.local"})
    return names


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


class OriginPolicy:
    """Whether a page's origin may open a tab on the front at ``port``."""

    def __init__(self, names: Iterable[str], port: int, allowed: Iterable[str] = ()) -> None:
        """``names``: see :func:`own_names`; ``allowed``: ``--allow-origin``'s
        origins (``*`` allows every page)."""
        self.names = {name.lower() for name in names}
        self.port = port
        self.allowed = {origin.strip().rstrip("/").lower() for origin in allowed}

    def allows(self, origin: str) -> bool:
        """Whether a page from ``origin`` (the ``Origin`` header) may open a tab."""
        if "*" in self.allowed or origin.strip().rstrip("/").lower() in self.allowed:
            return True
        try:
            parts = urlsplit(origin.strip())
            port = parts.port or _default_port(parts.scheme)
        except ValueError:
            return False
        host = (parts.hostname or "").lower()
        if parts.scheme not in ("http", "https") or port != self.port or not host:
            return False
        return host in self.names or _is_loopback(host)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
