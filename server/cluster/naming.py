"""A node's id and the URL clients reach it at.

A node keeps its id in its data directory (``cluster-node-id``), made on its
first start, so a node restarted on the same data directory is the same node:
the directory's entries of its matches point at it again. ``--node-id``
chooses one; a node without storage draws a new one each start.
"""

from __future__ import annotations

import re
import secrets
import socket
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from ..settings import check_node_id

__all__ = ["NODE_ID_FILE", "check_node_id", "node_id_for", "node_url", "with_port"]

NODE_ID_FILE = "cluster-node-id"
_ANY_HOST = {"", "0.0.0.0", "::"}


def _fresh_id() -> str:
    host = re.sub(r"[^A-Za-z0-9_-]", "-", socket.gethostname())[:24].strip("-") or "node"
    return f"{host}-{secrets.token_hex(3)}"


def node_id_for(data_dir: Path | None, chosen: str | None) -> str:
    """This node's id: ``chosen``, else the one kept in ``data_dir`` (made now if
    there is none yet), else a fresh one."""
    if chosen is not None:
        return check_node_id(chosen)
    if data_dir is None:
        return _fresh_id()
    path = data_dir / NODE_ID_FILE
    try:
        return check_node_id(path.read_text().strip())
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    node_id = _fresh_id()
    path.write_text(node_id + "\n")
    return node_id


def node_url(host: str, port: int, public_url: str | None, *, secure: bool) -> str:
    """The URL clients should use to reach this node: ``public_url`` if given,
    else ``ws://HOST:PORT`` — ``wss://`` for a node that serves TLS (``secure``)
    — with this machine's name when listening everywhere."""
    if public_url is not None:
        return public_url
    shown = socket.gethostname() if host in _ANY_HOST else host
    if ":" in shown:  # an IPv6 address
        shown = f"[{shown}]"
    return f"{'wss' if secure else 'ws'}://{shown}:{port}"


def with_port(url: str, port: int) -> str:
    """``url`` with its port replaced (a worker's own port)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    if ":" in host:
        host = f"[{host}]"
    return urlunsplit(parts._replace(netloc=f"{host}:{port}"))
