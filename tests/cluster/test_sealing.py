"""Issue 29, "Redis is trusted blindly" and "redirects downgrade", decided
without Redis: the seal (server/cluster/signing.py), the key file's checks,
heartbeats that expire (a fake clock), and the flags that go with them."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, cast

import pytest

from server.cli import parse_args
from server.cluster import redirect
from server.cluster.entries import CLOCK_SKEW, DirectoryEntry, NodeInfo
from server.cluster.node import Node
from server.cluster.signing import BadSeal, KeyFileError, Sealer, load_key
from server.cluster.store import Store, shown_url
from server.cluster.workers import worker_config
from server.config import ServerConfig

KEY = bytes(range(32))


def _key_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "cluster.key"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_seal_opens_only_with_its_key_and_its_kind() -> None:
    """Issue 29: a value sealed by a node opens; one sealed with another key,
    changed after sealing, sealed as another kind, or not sealed at all does not."""
    sealer = Sealer(KEY)
    sealed = sealer.seal("node", b"body")
    assert sealer.open("node", sealed) == b"body"
    forged = Sealer(os.urandom(32)).seal("node", b"body")
    for bad, kind in [
        (forged, "node"),
        (sealed[:-1] + b"X", "node"),
        (sealed, "directory"),
        (b"body", "node"),
        (b"", "node"),
    ]:
        with pytest.raises(BadSeal):
            sealer.open(kind, bad)
    with pytest.raises(RuntimeError):
        Sealer(None).seal("node", b"body")
    assert Sealer(None).open("node", forged) == b"body"  # unchecked: only to be shown


def test_the_store_ignores_what_it_did_not_seal_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 29: a heartbeat forged with another key is left out, with one
    warning however often it is read."""
    store = Store("redis://127.0.0.1:1/0", KEY)
    info = NodeInfo(node="evil", url="ws://127.0.0.1:9/", pid=1, started=0.0)
    forged = Store("redis://127.0.0.1:1/0", os.urandom(32))._pack(info)
    with caplog.at_level(logging.WARNING, logger="server.cluster.store"):
        for _ in range(3):
            assert store.unpack(forged, NodeInfo, "node evil's heartbeat") is None
    warnings = [r for r in caplog.records if "node evil's heartbeat" in r.getMessage()]
    assert len(warnings) == 1
    assert store.unpack(store._pack(info), NodeInfo, "node evil's heartbeat") == info


def test_a_redis_password_never_reaches_the_log() -> None:
    """README: Redis's password goes in the URL; what is shown hides it."""
    assert shown_url("redis://:s3cret@r:6379/0") == "redis://:***@r:6379/0"
    assert shown_url("redis://me:s3cret@r:6379/0") == "redis://me:***@r:6379/0"
    assert shown_url("redis://r:6379/0") == "redis://r:6379/0"
    assert Store("redis://:s3cret@r:6379/0", KEY).url == "redis://:***@r:6379/0"


@pytest.mark.parametrize(
    ("text", "mode", "why"),
    [
        (None, 0o600, "does not exist"),
        ("not hex at all", 0o600, "written as hex"),
        ("ab" * 16, 0o600, "fewer than 64"),
        ("ab" * 32, 0o644, "chmod 600"),
    ],
)
def test_a_key_file_that_cannot_be_used_says_why(
    tmp_path: Path, text: str | None, mode: int, why: str
) -> None:
    """A missing, non-hex, short or world-readable key file: a clear error."""
    path = tmp_path / "cluster.key" if text is None else _key_file(tmp_path, text, mode)
    with pytest.raises(KeyFileError, match=why):
        load_key(path)


def test_a_good_key_file_loads(tmp_path: Path) -> None:
    """64 hex digits and a newline, as ``openssl rand -hex 32`` writes them."""
    assert load_key(_key_file(tmp_path, KEY.hex() + "\n")) == KEY


def test_an_old_heartbeat_written_again_is_not_believed() -> None:
    """Issue 29: a heartbeat sealed long ago and written into Redis again does not
    make its node alive: a match there is unavailable, not a redirect (fake clock)."""
    now = [1000.0]
    hooks: Any = type(
        "Hooks",
        (),
        {"news_changed": lambda self, *news: None, "news_removed": lambda self, m: None},
    )()
    node = Node(cast(Store, None), "n1", "ws://n1:1", hooks, clock=lambda: now[0])
    old = NodeInfo(node="n3", url="ws://10.0.0.3:8765", pid=1, started=0.0, expires=990.0)
    entry = DirectoryEntry(match="m1", node="n3", created=1.0, summary=None, homes=())
    node._set_live({"n3": old})
    assert node.live == {"n3": old}  # within the skew the nodes' clocks are allowed
    now[0] = 990.0 + CLOCK_SKEW + 1
    node._set_live({"n3": old})
    assert node.live == {}
    assert redirect.to_entry(entry, node.live, True).code == "node_unavailable"


def test_the_heartbeat_a_node_writes_carries_its_expiry() -> None:
    """Three beats from now, by the node's clock."""
    hooks: Any = type("Hooks", (), {"local_matches": lambda self: {}})()
    node = Node(cast(Store, None), "n1", "ws://n1:1", hooks, heartbeat=2.0, clock=lambda: 50.0)
    assert node._info().expires == 56.0


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (["--cluster", "redis://r:1/0"], "--cluster needs --cluster-key-file"),
        (["--cluster", "redis://r:1/0"], "openssl rand -hex 32"),
        (["--cluster-key-file", "k"], "--cluster-key-file needs --cluster"),
        (["--cluster", "redis://r:1/0", "--cluster-key-file", "/nonexistent/k"], "not exist"),
        (["--cluster", "redis://r:1/0", "--workers", "2", "--worker", "0"], "TULIPS_CLUSTER_KEY"),
    ],
)
def test_a_cluster_without_a_usable_key_is_refused(
    flags: list[str],
    why: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29: a node that could not tell a node of its cluster from a forged one
    does not start; the error says how to make a key."""
    monkeypatch.delenv("TULIPS_CLUSTER_KEY", raising=False)
    with pytest.raises(SystemExit):
        parse_args(["--port", "9000", *flags])
    assert why in capsys.readouterr().err


def test_tls_with_a_ws_public_url_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 29: a TLS node does not send players to itself in clear."""
    key = _key_file(tmp_path, KEY.hex())
    with pytest.raises(SystemExit):
        parse_args(
            [
                *("--port", "9000", "--data-dir", str(tmp_path), "--tls"),
                *("--cluster", "redis://r:1/0", "--cluster-key-file", str(key)),
                *("--public-url", "ws://tulips.lan:9000"),
            ]
        )
    assert "--public-url must be wss:// with --tls" in capsys.readouterr().err


def test_the_key_reaches_the_config_and_workers_make_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key file is loaded; ``--workers`` without one leaves it to the supervisor,
    whose workers read it from their environment."""
    key = _key_file(tmp_path, KEY.hex())
    cluster = ["--port", "9000", "--cluster", "redis://r:1/0"]
    assert parse_args([*cluster, "--cluster-key-file", str(key)]).cluster_key == KEY
    assert parse_args([*cluster, "--workers", "2"]).cluster_key is None
    monkeypatch.setenv("TULIPS_CLUSTER_KEY", KEY.hex())
    worker = parse_args([*cluster, "--workers", "2", "--worker", "1"])
    assert worker.cluster_key == KEY
    assert "cluster_key" not in repr(worker)  # a config may be logged; the key must not


def test_workers_with_tls_name_wss_urls(tmp_path: Path) -> None:
    """Issue 29: ``--workers 2 --tls`` and no ``--public-url``: each worker's URL is
    ``wss://`` (a ``ws://`` one made cross-worker joins fail, "use wss://")."""
    config = ServerConfig(
        host="127.0.0.1", port=9000, cluster="redis://r:6379/0", workers=2,
        tls_cert=tmp_path / "cert.pem", tls_key=tmp_path / "key.pem", cluster_key=KEY,
    )  # fmt: skip
    assert worker_config(config, 1).public_url == "wss://127.0.0.1:9002"
    plain = ServerConfig(host="127.0.0.1", port=9000, cluster="redis://r:6379/0", workers=2)
    assert worker_config(plain, 0).public_url == "ws://127.0.0.1:9001"
