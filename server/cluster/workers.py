"""``tulips-server --cluster … --workers N``: N nodes on this machine, one command.

The supervisor (this process) starts N worker processes, ``python -m server``
with the same flags and ``--worker I``. Every worker listens on the shared
``--port`` with SO_REUSEPORT, so the kernel spreads new connections over them
and one command uses every core; each also listens on its own port,
``--port + 1 + I``, which is the URL it gives in redirects (a connection to
the shared port may land on any worker, so a redirect must name one). Each
worker has its own data directory, ``DATA_DIR/node-I``, and so its own node id
and its own SQLite; its matches come back when it restarts there.

With ``--tls`` and no certificate of the operator's, the supervisor makes the
self-signed one before any worker starts, so that every worker serves the
same certificate and a client's pin fits them all; each worker's URL is then
``wss://``.

Without ``--cluster-key-file`` the supervisor makes a cluster key for this
run and gives it to its workers in their environment (``TULIPS_CLUSTER_KEY``,
which other users cannot read, unlike a command line): they are a cluster of
their own. Nodes on other machines need one key file given to every node.
Redis's password, if the supervisor was given one without the URL, reaches
the workers the same way (``TULIPS_REDIS_PASSWORD``), never in their argv.

The supervisor restarts a worker that dies (a crash, a kill), and on SIGINT
or SIGTERM stops them all and waits for them to store what they accepted.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import subprocess
import sys
import time
from types import FrameType

from ..config import ServerConfig
from ..lan import tls
from .credentials import REDIS_PASSWORD_ENV, worker_env
from .naming import node_url, with_port
from .signing import KEY_ENV, make_key

__all__ = ["supervise", "worker_config"]

log = logging.getLogger(__name__)

#: A worker that dies this many times within ``_CRASH_WINDOW`` seconds is not restarted.
_MAX_CRASHES = 5
_CRASH_WINDOW = 60.0
_POLL = 0.2


def worker_config(config: ServerConfig, index: int) -> ServerConfig:
    """The configuration of worker ``index`` of ``config.workers``."""
    own = config.port + 1 + index
    base = node_url(config.host, config.port, config.public_url, secure=config.tls_cert is not None)
    return dataclasses.replace(
        config,
        worker=index,
        reuse_port=True,
        extra_ports=(own,),
        public_url=with_port(base, own),
        data_dir=None if config.data_dir is None else config.data_dir / f"node-{index}",
        node_id=None if config.node_id is None else f"{config.node_id}-{index}",
    )


class _Worker:
    """One worker process and its recent deaths."""

    def __init__(self, index: int, command: list[str], env: dict[str, str] | None) -> None:
        self.index = index
        self.command = command
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.deaths: list[float] = []

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, env=self.env)
        log.info("worker %d started (pid %d)", self.index, self.process.pid)

    def given_up(self) -> bool:
        now = time.monotonic()
        self.deaths = [t for t in self.deaths if now - t < _CRASH_WINDOW]
        return len(self.deaths) >= _MAX_CRASHES


def supervise(config: ServerConfig, argv: list[str]) -> int:
    """Run ``config.workers`` workers with ``argv`` until SIGINT or SIGTERM; 0 on a
    clean stop, 1 if every worker kept dying."""
    made_key = None
    if config.cluster_key is None:
        made_key = make_key().hex()
        log.info(
            "the workers share a cluster key made for this run: nodes on other machines"
            " cannot join them (give every node one --cluster-key-file for that)"
        )
    env = worker_env(os.environ, {KEY_ENV: made_key, REDIS_PASSWORD_ENV: config.redis_password})
    workers = [
        _Worker(i, [sys.executable, "-m", "server", *argv, "--worker", str(i)], env)
        for i in range(config.workers)
    ]
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    if config.tls_self_signed:
        # Made here, once, before any worker starts: workers making it at the same
        # time could each serve a certificate of its own on the one shared port, or
        # leave one's certificate beside another's key.
        try:
            made = tls.from_config(config)
        except tls.TlsError as exc:
            log.error("%s", exc)
            return 1
        assert made is not None
        log.info("the workers share the TLS certificate %s (%s)", made.cert, made.fingerprint)
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for worker in workers:
            worker.start()
        log.info(
            "%d workers share port %d; their own ports are %d to %d",
            config.workers,
            config.port,
            config.port + 1,
            config.port + config.workers,
        )
        while not stopping:
            time.sleep(_POLL)
            for worker in workers:
                if worker.process is None or worker.process.poll() is None:
                    continue
                log.error("worker %d exited with %s", worker.index, worker.process.returncode)
                worker.deaths.append(time.monotonic())
                if worker.given_up():
                    log.error("worker %d keeps dying; it is not restarted", worker.index)
                    worker.process = None
                else:
                    worker.start()
            if all(w.process is None for w in workers):
                return 1
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _stop_all(workers, config.stop_timeout + 5)


def _stop_all(workers: list[_Worker], timeout: float) -> None:
    """SIGTERM every worker, wait up to ``timeout`` s, then kill what is left."""
    running = [w.process for w in workers if w.process is not None and w.process.poll() is None]
    for process in running:
        process.terminate()
    deadline = time.monotonic() + timeout
    for process in running:
        try:
            process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
