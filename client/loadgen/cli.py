"""tulips-loadtest: load, soak and bench tools for a Gift of Tulips server.

Each subcommand plays SDK clients against a server, or starts one of its own
on 127.0.0.1 and judges it (the soaks exit with code 1 on a missed target);
tulips-loadtest SUBCOMMAND --help lists its flags. "run" reports completed
matches/s, actions/s, act->ok latency, errors, the server's memory and, for a
server it started (or --server-pid), its CPU seconds per 1,000 actions: the
figure a busy machine disturbs least. "reference" then runs the same load
against a bare websockets + MessagePack server with no game (python -m
client.loadgen.reference) and prints each figure as a ratio to it: what the
game costs over the physical limit of this stack here.

    tulips-loadtest run ws://127.0.0.1:8765 --matches 50 --think 0 --duration 20
    tulips-loadtest run --spawn-server --matches 500 --think 1 --duration 60
    tulips-loadtest run ws://node1:8765 ws://node2:8765 --matches 500 --think 1
    tulips-loadtest run ws://node1:8765 --all-nodes     # every node of node1's cluster
    tulips-loadtest cluster --workers 2 --matches 50 --think 0  # 1 process vs 2 workers
    tulips-loadtest reference --spawn-server --storage off --matches 50 --think 0
    tulips-loadtest hostile 1000000
    tulips-loadtest crash-soak 100

With several URLs (a cluster's nodes) the clients are spread over them: seat s
of match i connects to URL (i + s) mod N, so joins follow the cluster's
redirects to the match's node.

The flags of earlier releases (tulips-loadtest --spawn-server ..., --reference,
--compare-workers N, --hostile N, --crash-soak K) still work, as deprecated
aliases of these subcommands, for one release.

Only loopback or LAN addresses you run yourself are fair targets.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
from collections.abc import Callable

from protocol.version import add_version_flag

from . import connbench, crashsoak, hostile, lobbyload, startup_bench
from .cluster import cluster_urls, spawned_cluster
from .load import raise_fd_limit, run_load, spawned_reference, spawned_server, wait_until_up
from .report import (
    LoadReport,
    against_reference,
    efficiency,
    section,
    side_by_side,
    storage_cost,
    workers_gain,
)

__all__ = ["SUBCOMMANDS", "main"]

#: A subcommand's flags, and what it does with them.
_Tool = tuple[
    Callable[[argparse.ArgumentParser], None],
    Callable[[argparse.Namespace, argparse.ArgumentParser], int],
]

PROG = "tulips-loadtest"


def _load_tool(reference: bool = False, workers: bool = False) -> _Tool:
    """``run``, ``reference`` or ``cluster``: one load, measured against other runs."""

    def add(parser: argparse.ArgumentParser) -> None:
        if workers:
            parser.add_argument(
                "--workers",
                dest="compare_workers",
                type=int,
                required=True,
                metavar="N",
                help="start one server process, then a cluster of N workers on a private"
                " redis-server, and measure both under the same load, side by side",
            )
            parser.add_argument(
                "--storage",
                choices=["off", "full", "normal"],
                default="full",
                help="memory only, or SQLite with this --sync",
            )
        else:
            _add_server_flags(parser)
        _add_load_flags(parser)
        parser.set_defaults(reference=reference)
        if not workers:
            parser.set_defaults(compare_workers=None)
        else:
            parser.set_defaults(
                urls=[], spawn_server=False, all_nodes=False, server_pid=None, rounds=1
            )
            parser.set_defaults(compare_storage=False, loop="asyncio")

    return add, _run_load_command


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``tulips-loadtest``: a subcommand, or the flags of earlier
    releases (deprecated aliases, see :func:`_legacy`)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] not in SUBCOMMANDS and args[0] not in ("-h", "--help", "--version"):
        return _legacy(args)
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_version_flag(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    for name, (summary, (add, _)) in SUBCOMMANDS.items():
        sub = commands.add_parser(
            name,
            help=summary,
            description=_DESCRIPTIONS.get(name, summary),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add(sub)
        sub.set_defaults(subparser=sub)
    parsed = parser.parse_args(args)
    _, (_, run) = SUBCOMMANDS[parsed.command]
    code: int = run(parsed, parsed.subparser)
    return code


def _legacy(args: list[str]) -> int:
    """The flags of earlier releases, kept for one release: ``--hostile N`` and
    ``--crash-soak K`` (each with its own flags) and the flat load flags, where
    ``--reference`` and ``--compare-workers N`` chose the mode."""

    def given(flag: str) -> bool:
        return any(a == flag or a.startswith(f"{flag}=") for a in args)

    if given("--hostile"):
        name, prog, instead = "hostile", f"{PROG} --hostile", "hostile N"
    elif given("--crash-soak"):
        name, prog, instead = "crash-soak", f"{PROG} --crash-soak", "crash-soak K"
    else:
        name, prog = "run", PROG
        instead = (
            "cluster --workers N"
            if given("--compare-workers")
            else "reference"
            if given("--reference")
            else "run"
        )
    print(
        f"{PROG}: these flags are deprecated aliases; use '{PROG} {instead} ...'",
        file=sys.stderr,
    )
    tool = SUBCOMMANDS[name][1]
    parser = argparse.ArgumentParser(
        prog=prog,
        description=_DESCRIPTIONS.get(name, __doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run = tool[1]
    if name == "run":
        add_version_flag(parser)
        _add_server_flags(parser)
        _add_load_flags(parser)
        parser.add_argument(
            "--compare-workers",
            type=int,
            metavar="N",
            help="start one server process, then a cluster of N workers on a private"
            " redis-server, and measure both under the same load, side by side",
        )
        parser.add_argument(
            "--reference",
            action="store_true",
            help="then run the same load against a bare websockets + MessagePack server"
            " (python -m client.loadgen.reference) and print the figures side by side, as ratios",
        )
    elif name == "hostile":
        hostile.add_arguments(parser, legacy=True)
    else:
        crashsoak.add_arguments(parser, legacy=True)
    return run(parser.parse_args(args), parser)


def _add_server_flags(parser: argparse.ArgumentParser) -> None:
    """Which server to load: URLs, or one this run starts (and how)."""
    parser.add_argument(
        "urls",
        nargs="*",
        metavar="url",
        help="ws://HOST:PORT of a running server; several: the clients are spread over them",
    )
    parser.add_argument(
        "--all-nodes",
        action="store_true",
        help="spread the clients over every node of the first URL's cluster",
    )
    parser.add_argument(
        "--storage",
        choices=["off", "full", "normal"],
        default="full",
        help="with --spawn-server: memory only, or SQLite with this --sync",
    )
    parser.add_argument(
        "--compare-storage",
        action="store_true",
        help="with --spawn-server: run with storage off, then on (sync full), side by side",
    )
    parser.add_argument(
        "--spawn-server",
        action="store_true",
        help="start a local server on a free port for the run",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="with --spawn-server: run everything this many times, back to back, and print"
        " the median efficiency (steadier on a busy machine)",
    )
    parser.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="the event loop of the servers this run starts (uvloop: the optional extra)",
    )
    parser.add_argument(
        "--server-pid",
        type=int,
        help="with a URL: the server's process id on this machine, for its CPU figures",
    )


def _add_load_flags(parser: argparse.ArgumentParser) -> None:
    """The load itself: how many matches, how fast, for how long."""
    parser.add_argument(
        "--hard-bots",
        type=int,
        default=0,
        help="tables of four hard server bots playing beside the measured matches",
    )
    parser.add_argument(
        "--analyses",
        type=int,
        default=0,
        help="players beside the measured matches who each play quick matches against "
        "bots and ask for every one's post-game analysis (the game's server only)",
    )
    parser.add_argument("--matches", type=int, default=50, help="concurrent matches")
    parser.add_argument("--players", type=int, default=4, choices=range(2, 7))
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds a seat waits after its prompt (0: flat out)",
    )
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured")
    parser.add_argument(
        "--ramp", type=float, help="seconds over which matches start (default: 10 x --think)"
    )


def _print(lines: list[str]) -> None:
    print("\n".join(lines))


def _run_load_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``run``, ``reference`` and ``cluster``: the load, each run's report, the comparisons."""
    spawning = args.spawn_server or args.compare_workers is not None
    if bool(args.urls) == spawning:
        parser.error("give server URLs, or --spawn-server or --compare-workers (not both)")
    if args.matches < 1 or args.duration <= 0 or args.think < 0:
        parser.error("--matches must be at least 1, --duration positive, --think not negative")
    if args.rounds < 1 or (args.rounds > 1 and not args.spawn_server):
        parser.error("--rounds must be at least 1, and goes with --spawn-server")
    if args.server_pid is not None and len(args.urls) != 1:
        parser.error("--server-pid goes with one URL (a spawned server's pid is known)")
    raise_fd_limit()
    gc.freeze()  # as the server does: keep collector pauses out of the latencies
    gc.set_threshold(50_000, 20, 100)

    def go(url: str | list[str], pid: int | None = None, game: bool = True) -> LoadReport:
        async def run() -> LoadReport:
            urls = [url] if isinstance(url, str) else url
            for each in urls:
                await wait_until_up(each)
            if args.all_nodes:
                urls = await cluster_urls(urls)
            ramp = args.ramp if args.ramp is not None else 10 * args.think
            return await run_load(
                urls,
                args.matches,
                args.players,
                args.think,
                args.duration,
                ramp,
                args.hard_bots,
                server_pid=pid,
                analyses=args.analyses if game else 0,
            )

        return asyncio.run(run())

    print(f"{args.matches} matches x {args.players} players, think {args.think} s")
    if args.compare_workers is not None:
        return _compare_workers(args.compare_workers, args.storage, go)
    if not args.spawn_server:
        report = go(args.urls, args.server_pid)
        _print(report.lines())
        reports = {"server": report}
        if args.reference:
            reports["reference"] = _reference_run(args.loop, go)
            _print(against_reference(reports))
        return 0 if all(r.errors == 0 for r in reports.values()) else 1
    errors = 0
    efficiencies: dict[str, list[float]] = {}
    for round_ in range(args.rounds):
        if args.rounds > 1:
            print(f"== round {round_ + 1} of {args.rounds}")
        reports = {}
        modes = ["off", "full"] if args.compare_storage else [args.storage]
        for mode in modes:
            with spawned_server(mode, args.loop) as spawned:
                reports[f"storage {mode}"] = report = go(spawned.url, spawned.pid)
            _print(section(f"storage {mode}", report))
        if args.compare_storage:
            off, on = reports["storage off"], reports["storage full"]
            _print(side_by_side("storage off", off, "storage on (sync full)", on))
            _print(storage_cost(off, on))
        if args.reference:
            reports["reference"] = _reference_run(args.loop, go)
            _print(against_reference(reports))
            for name, value in efficiency(reports).items():
                efficiencies.setdefault(name, []).append(value)
        errors += sum(r.errors for r in reports.values())
    if args.rounds > 1 and efficiencies:
        print(f"-- median of {args.rounds} rounds")
        for name, values in efficiencies.items():
            shown = ", ".join(f"{v:.2f}" for v in values)
            print(f"{name:14s} efficiency {statistics.median(values):.2f}x   ({shown})")
    return 0 if errors == 0 else 1


def _compare_workers(workers: int, storage: str, go: Callable[..., LoadReport]) -> int:
    """One server process, then ``workers`` of them in a cluster, under the same load."""
    with spawned_server(storage) as spawned:
        one = go(spawned.url, spawned.pid)
    _print(section("one process", one))
    with spawned_cluster(workers, storage) as urls:
        many = go(urls)
    _print(section(f"--workers {workers} (clients spread over {', '.join(urls)})", many))
    _print(side_by_side("one process", one, f"--workers {workers}", many))
    _print(workers_gain(one, many, workers))
    return 0 if one.errors == many.errors == 0 else 1


def _reference_run(loop: str, go: Callable[..., LoadReport]) -> LoadReport:
    """The same load against the reference server; its report, printed."""
    with spawned_reference(loop) as spawned:
        reference = go(spawned.url, spawned.pid, game=False)
    title = "reference (python -m client.loadgen.reference: websockets + MessagePack, no game)"
    _print(section(title, reference))
    return reference


SUBCOMMANDS: dict[str, tuple[str, _Tool]] = {
    "run": ("many concurrent matches of SDK clients against a server", _load_tool()),
    "reference": (
        "the same load against the server, then against a bare websockets + MessagePack"
        " server with no game, as ratios",
        _load_tool(reference=True),
    ),
    "cluster": (
        "one server process, then --workers N of them, under the same load, side by side",
        _load_tool(workers=True),
    ),
    "hostile": (
        "a real server against N hostile frames",
        (hostile.add_arguments, hostile.run_command),
    ),
    "crash-soak": (
        "kill the server K times, lose nothing",
        (crashsoak.add_arguments, crashsoak.run_command),
    ),
    "lobby": (
        "what lobby browsers cost while matches play: the same load alone and beside them",
        (lobbyload.add_arguments, lobbyload.run_command),
    ),
    "connbench": (
        "how long a connection takes to set up, TLS against plain",
        (connbench.add_arguments, connbench.run_command),
    ),
    "startup": (
        "how long the terminal client takes from start to its first screen",
        (startup_bench.add_arguments, startup_bench.run_command),
    ),
}

#: Modules whose docstring is a subcommand's full description.
_DESCRIPTIONS = {
    "hostile": hostile.__doc__,
    "crash-soak": crashsoak.__doc__,
    "connbench": connbench.__doc__,
    "lobby": lobbyload.__doc__,
    "startup": startup_bench.__doc__,
}
