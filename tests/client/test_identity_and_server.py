"""The token store and `tulips play`'s local server subprocess."""

from __future__ import annotations

import json
import pathlib
import stat
import sys
import urllib.request

import pytest

from client.localserver import LocalServer, LocalServerError
from client.tui.identity import MAX_SERVERS, IdentityStore


def test_tokens_are_kept_per_server_and_private(tmp_path: pathlib.Path) -> None:
    """One token per URL, in a file only its owner may read."""
    store = IdentityStore(tmp_path / "sub" / "identity.json")
    assert store.token_for("ws://a:1") is None
    store.remember("ws://a:1", "t1")
    store.remember("ws://b:2", "t2")
    assert (store.token_for("ws://a:1"), store.token_for("ws://b:2")) == ("t1", "t2")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    store.forget("ws://a:1")
    assert store.token_for("ws://a:1") is None and store.token_for("ws://b:2") == "t2"


def test_a_damaged_file_is_an_empty_store(tmp_path: pathlib.Path) -> None:
    """Garbage in identity.json: no token, and the next remember rewrites it."""
    path = tmp_path / "identity.json"
    path.write_text("{not json")
    store = IdentityStore(path)
    assert store.token_for("ws://a:1") is None
    store.remember("ws://a:1", "t1")
    assert json.loads(path.read_text()) == {"servers": {"ws://a:1": "t1"}}


def test_old_servers_are_forgotten_first(tmp_path: pathlib.Path) -> None:
    """The store keeps the most recently used servers only."""
    store = IdentityStore(tmp_path / "identity.json")
    for n in range(MAX_SERVERS + 3):
        store.remember(f"ws://h:{n}", str(n))
    assert store.token_for("ws://h:0") is None
    assert store.token_for(f"ws://h:{MAX_SERVERS + 2}") == str(MAX_SERVERS + 2)


async def test_the_local_server_starts_answers_and_stops() -> None:
    """A free port, /healthz answering, and nothing left after stop()."""
    local = LocalServer(bot_delay=0)
    url = await local.start()
    try:
        assert url == f"ws://127.0.0.1:{local.port}"
        process = local.process
        assert process is not None and process.poll() is None
        with urllib.request.urlopen(f"http://127.0.0.1:{local.port}/healthz", timeout=5) as r:
            assert json.loads(r.read())["status"] == "ok"
    finally:
        local.stop()
    assert process.poll() is not None and local.process is None


class _Broken(LocalServer):
    def command(self, port: int) -> list[str]:
        return [sys.executable, "-c", "import sys; sys.exit('cannot listen: port in use')"]


async def test_a_server_that_dies_at_start_is_reported() -> None:
    """The server exits before it answers: its last words, after a few tries."""
    broken = _Broken(attempts=2)
    with pytest.raises(LocalServerError, match="cannot listen: port in use"):
        await broken.start()
    assert broken.process is None
