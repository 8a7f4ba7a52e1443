"""Where a request for a match must go (server/cluster/redirect.py), decided
without Redis, and what the cluster flags make of the configuration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import protocol as wire
from server.cli import parse_args
from server.cluster import redirect
from server.cluster.entries import DirectoryEntry, NodeInfo, PlayerEntry, decode, encode
from server.cluster.naming import node_id_for, with_port
from server.cluster.workers import worker_config
from server.config import ServerConfig

from .helpers import ROOT

_SUMMARY = wire.MatchSummary(
    match="m1",
    name="far",
    status="open",
    seats=(wire.SeatInfo(seat=0, kind="human", name="Ada"), wire.SeatInfo(seat=1, kind="empty")),
    host="Ada",
    has_join_code=False,
    ruleset="standard",
    node="n3",
)
ENTRY = DirectoryEntry(match="m1", node="n3", created=10.0, summary=_SUMMARY, homes=("p1",))
LIVE = {"n3": NodeInfo(node="n3", url="ws://10.0.0.3:8765", pid=1, started=0.0)}


def test_a_match_on_a_live_node_is_elsewhere_with_its_url() -> None:
    """The node is alive and Redis answers: `elsewhere`, naming the URL and the match."""
    error = redirect.for_match("m1", {"m1": ENTRY}, LIVE, store_ok=True)
    assert (error.code, error.url, error.match) == ("elsewhere", "ws://10.0.0.3:8765", "m1")
    sent = wire.error_message_for(error, 5)
    assert (sent.id, sent.url, sent.match) == (5, "ws://10.0.0.3:8765", "m1")


def test_a_match_whose_node_stopped_beating_is_unavailable() -> None:
    """No heartbeat: `node_unavailable`, and the summary says so."""
    error = redirect.for_match("m1", {"m1": ENTRY}, {}, store_ok=True)
    assert (error.code, error.url, error.match) == ("node_unavailable", None, "m1")
    assert not redirect.available(ENTRY, {}, True)


def test_without_redis_nothing_is_sent_elsewhere() -> None:
    """Redis unreachable: `cluster_unavailable`, even for a match the node never heard of."""
    assert redirect.for_match("m1", {"m1": ENTRY}, LIVE, False).code == "cluster_unavailable"
    assert redirect.for_match("zz", {}, LIVE, False).code == "cluster_unavailable"
    assert not redirect.available(ENTRY, LIVE, False)


def test_an_unknown_match_is_no_such_match() -> None:
    """Redis answers and no node has it: as on one server."""
    assert redirect.for_match("zz", {"m1": ENTRY}, LIVE, True).code == "no_such_match"


def test_a_returning_player_is_sent_to_their_newest_seat() -> None:
    """The newest match where they hold a seat they have not left."""
    newer = DirectoryEntry(match="m2", node="n2", created=20.0, summary=_SUMMARY, homes=("p1",))
    assert redirect.home_of("p1", [ENTRY, newer]) is newer
    assert redirect.home_of("p2", [ENTRY, newer]) is None


def test_entries_round_trip_and_hold_no_token() -> None:
    """An entry decodes to itself; a player entry holds token hashes (its
    linked devices' too, issue 31), not tokens."""
    assert decode(encode(ENTRY), DirectoryEntry) == ENTRY
    player = PlayerEntry(id="p1", name="Ada", token_hash="ab" * 32, other_tokens=("cd" * 32,))
    assert decode(encode(player), PlayerEntry) == player
    assert set(player.__struct_fields__) == {"id", "name", "token_hash", "other_tokens"}


def test_a_worker_has_its_own_port_url_data_dir_and_node_id(tmp_path: Path) -> None:
    """Worker I: the shared port with SO_REUSEPORT, its own port + 1 + I, DATA_DIR/node-I."""
    config = ServerConfig(
        port=9000, data_dir=tmp_path, cluster="redis://r:6379/0", workers=2,
        public_url="ws://tulips.lan:9000",
    )  # fmt: skip
    worker = worker_config(config, 1)
    assert (worker.port, worker.extra_ports, worker.reuse_port) == (9000, (9002,), True)
    assert worker.public_url == "ws://tulips.lan:9002"
    assert worker.data_dir == tmp_path / "node-1"
    assert with_port("ws://[::1]:1/x", 5) == "ws://[::1]:5/x"


def test_a_node_keeps_its_id_in_its_data_dir(tmp_path: Path) -> None:
    """Restarted on the same data dir, a node is the same node."""
    first = node_id_for(tmp_path, None)
    assert node_id_for(tmp_path, None) == first
    assert node_id_for(tmp_path, "chosen") == "chosen"
    with pytest.raises(ValueError, match="node id"):
        node_id_for(None, "no spaces")


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (["--workers", "2"], "--workers needs --cluster"),
        (["--public-url", "ws://a:1"], "--public-url needs --cluster"),
        (["--cluster", "redis://r:1/0", "--port", "0"], "needs a fixed --port"),
        (["--cluster", "http://r:1"], "expected redis://"),
    ],
)
def test_cluster_flags_that_do_not_fit_are_refused(
    flags: list[str], why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line says what is wrong with a cluster flag."""
    with pytest.raises(SystemExit):
        parse_args(flags)
    assert why in capsys.readouterr().err


def test_a_single_server_never_imports_redis() -> None:
    """Without --cluster nothing changes: one process, and no redis import."""
    code = (
        "import asyncio, sys\n"
        "from server.app import TulipsServer\n"
        "from server.cli import parse_args\n"
        "async def main():\n"
        "    server = TulipsServer(parse_args(['--host', '127.0.0.1', '--port', '0',"
        " '--no-storage']))\n"
        "    await server.start(); server.health(); await server.stop()\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'redis'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
