"""The server as the budget measures it: ``python -m server.lab.budget_server [flags]``.

``tulips-server`` itself (:func:`server.cli.main`, every flag of its own),
with three differences that make a fixed script cost the same on every run:
each match is dealt from a known sequence of seeds (the same deals every run;
never what a real server does: R26 wants secret seeds), it gives memory back
half a second after clients leave (so that the script can wait that out
between its counts), and on ``SIGUSR1`` it
collects its garbage and prints one JSON line to standard output with the
memory its Python objects hold (``traced``: :mod:`tracemalloc`, on with
``--traced``, else null) and its resident memory (``rss``). It is what
:mod:`server.lab.budget` runs, under valgrind for the instructions.
"""

from __future__ import annotations

import gc
import json
import random
import signal
import sys
import tracemalloc
from types import FrameType

from ..app import TulipsServer, memory_bytes
from ..cli import main as serve

__all__ = ["DEAL_SEED", "RELEASE_AFTER", "main"]

#: Where the sequence of deal seeds starts: the budget's figures hold for these deals.
DEAL_SEED = 20261207
#: Seconds after a departure that this server gives memory back (a real one: 5),
#: so that the script waits that long between its counts, not longer.
RELEASE_AFTER = 0.5


def _report(signum: int, frame: FrameType | None) -> None:
    """Print what the server's memory holds now, as one JSON line."""
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else None
    print(json.dumps({"traced": traced, "rss": memory_bytes()}), flush=True)


def main(argv: list[str] | None = None) -> int:
    """Serve as ``tulips-server`` does, dealing from :data:`DEAL_SEED` on."""
    words = list(sys.argv[1:] if argv is None else argv)
    if "--traced" in words:
        words.remove("--traced")
        tracemalloc.start()
    seeds = random.Random(DEAL_SEED)

    def setup(server: TulipsServer) -> None:
        server.lobby.new_seed = lambda: seeds.getrandbits(63)
        server.release_after = RELEASE_AFTER

    signal.signal(signal.SIGUSR1, _report)
    return serve(words, setup=setup)


if __name__ == "__main__":
    sys.exit(main())
