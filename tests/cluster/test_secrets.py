"""Issue 29 review: secrets a node is given never reach a command line or a
child's environment, and ``--web`` is refused with ``--workers``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import redis as redis_py

from client.loadgen.redisproc import RedisProcess
from client.localserver import free_port_run
from server.cli import parse_args
from server.cluster.credentials import worker_env

from .helpers import HEARTBEAT, ROOT, fetch_health, needs_redis, wait_sync

KEY = bytes(range(32))
CLUSTER = ["--port", "9000", "--cluster", "redis://r:1/0"]


def _private(tmp_path: Path, name: str, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(mode)
    return path


def test_web_with_workers_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Workers share the game port: a tab's client could land on a worker that
    does not know its tab pass, and count there as 127.0.0.1. Refused, saying why."""
    with pytest.raises(SystemExit):
        parse_args([*CLUSTER, "--workers", "2", "--web"])
    err = capsys.readouterr().err
    assert "--web cannot go with --workers" in err and "own address" in err
    key = _private(tmp_path, "cluster.key", KEY.hex())
    one = parse_args([*CLUSTER, "--cluster-key-file", str(key), "--web", "9100"])
    assert one.web_port == 9100 and one.workers == 1


def test_the_key_and_password_leave_the_environment_once_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker's key and Redis's password are taken out of ``os.environ`` as
    they are read (so a browser tab's client never inherits them), and kept out
    of the config's repr."""
    monkeypatch.setenv("TULIPS_CLUSTER_KEY", KEY.hex())
    monkeypatch.setenv("TULIPS_REDIS_PASSWORD", "s3cret")
    config = parse_args([*CLUSTER, "--workers", "2", "--worker", "0"])
    assert config.cluster_key == KEY and config.redis_password == "s3cret"
    assert "TULIPS_CLUSTER_KEY" not in os.environ and "TULIPS_REDIS_PASSWORD" not in os.environ
    assert "s3cret" not in repr(config)
    monkeypatch.setenv("TULIPS_REDIS_PASSWORD", "s3cret")
    parse_args(["--port", "9000"])  # not even a cluster: still taken out
    assert "TULIPS_REDIS_PASSWORD" not in os.environ


def test_a_redis_password_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--redis-password-file``: read like the key file (its owner only), and
    not with a password in the URL as well."""
    key = _private(tmp_path, "cluster.key", KEY.hex())
    good = _private(tmp_path, "redis.pass", "s3cret\n")
    flags = [*CLUSTER, "--cluster-key-file", str(key), "--redis-password-file"]
    assert parse_args([*flags, str(good)]).redis_password == "s3cret"
    for path, why in [
        (_private(tmp_path, "open.pass", "s3cret", 0o644), "chmod 600"),
        (_private(tmp_path, "empty.pass", "\n"), "on one line"),
        (tmp_path / "missing.pass", "does not exist"),
    ]:
        with pytest.raises(SystemExit):
            parse_args([*flags, str(path)])
        assert why in capsys.readouterr().err
    twice = ["--port", "9000", "--cluster", "redis://:other@r:1/0"]
    with pytest.raises(SystemExit):
        parse_args([*twice, "--cluster-key-file", str(key), "--redis-password-file", str(good)])
    assert "given twice" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--port", "9000", "--redis-password-file", str(good)])
    assert "--redis-password-file needs --cluster" in capsys.readouterr().err


def test_workers_are_given_only_the_secrets_that_are_set() -> None:
    """What the supervisor puts in its workers' environment."""
    env = worker_env({"PATH": "/bin"}, {"TULIPS_CLUSTER_KEY": "ab", "TULIPS_REDIS_PASSWORD": None})
    assert env == {"PATH": "/bin", "TULIPS_CLUSTER_KEY": "ab"}


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(line) for line in found.stdout.split()]


@needs_redis
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_workers_reach_a_redis_with_a_password_that_no_argv_shows(tmp_path: Path) -> None:
    """Redis with ``requirepass``; ``--workers 2`` given the password in
    ``TULIPS_REDIS_PASSWORD``: both workers join the cluster, and neither the
    supervisor's command line nor a worker's holds the password."""
    with RedisProcess() as redis:
        admin = redis_py.Redis.from_url(redis.url)
        admin.config_set("requirepass", "pa55-word")
        admin.close()
        port = free_port_run(2)
        command = [sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", str(port)]
        command += ["--data-dir", str(tmp_path), "--cluster", redis.url, "--workers", "2"]
        command += ["--heartbeat", str(HEARTBEAT), "--log-level", "WARNING"]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TULIPS_REDIS_PASSWORD": "pa55-word"}
        parent = subprocess.Popen(command, cwd=ROOT, env=env)
        try:
            own = [port + 1, port + 2]
            wait_sync(
                lambda: all(
                    (fetch_health(p) or {}).get("cluster", {}).get("store") == "ok"
                    and len((fetch_health(p) or {}).get("cluster", {}).get("nodes", {})) == 2
                    for p in own
                ),
                "both workers in the cluster, through the password",
            )
            workers = _children(parent.pid)
            assert len(workers) == 2
            for pid in [parent.pid, *workers]:
                assert "pa55-word" not in _cmdline(pid)
        finally:
            parent.send_signal(signal.SIGTERM)
            assert parent.wait(30) == 0
