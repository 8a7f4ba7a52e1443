"""``tulips-loadtest``'s subcommands, its deprecated flat flags, its one report
printer, and the flags :class:`client.localserver.LocalServer` gives a tool's server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from client.loadgen import cli
from client.loadgen.report import LoadReport, side_by_side, storage_cost, workers_gain
from client.localserver import LocalServer


@pytest.mark.parametrize("name", sorted(cli.SUBCOMMANDS))
def test_each_subcommand_has_its_own_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``tulips-loadtest NAME --help`` names the subcommand and exits 0."""
    with pytest.raises(SystemExit) as exited:
        cli.main([name, "--help"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: tulips-loadtest {name}")


@pytest.mark.parametrize(
    ("argv", "instead"),
    [
        (["--hostile", "1", "--help"], "hostile N"),
        (["--crash-soak", "1", "--help"], "crash-soak K"),
        (["--compare-workers", "2", "--help"], "cluster --workers N"),
        (["--spawn-server", "--reference", "--help"], "reference"),
        (["--spawn-server", "--help"], "run"),
    ],
)
def test_the_old_flags_still_work_and_name_their_subcommand(
    argv: list[str], instead: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A deprecated alias runs as before and says on stderr what replaces it."""
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: tulips-loadtest")
    assert f"use 'tulips-loadtest {instead} ...'" in captured.err


def test_a_subcommand_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    """No subcommand and no flags: a usage error, not a run."""
    with pytest.raises(SystemExit) as exited:
        cli.main([])
    assert exited.value.code == 2
    assert "SUBCOMMAND" in capsys.readouterr().err


def _report(actions: int, matches: int, latency: float) -> LoadReport:
    return LoadReport(matches=matches, actions=actions, latencies=[latency], elapsed=10.0)


def test_one_printer_puts_two_runs_side_by_side() -> None:
    """Storage off against on, one process against workers: the same columns."""
    off, on = _report(20_000, 100, 0.001), _report(15_000, 80, 0.004)
    assert side_by_side("storage off", off, "storage on (sync full)", on) == [
        "-- side by side      storage off   storage on (sync full)",
        "matches/s                 10.00          8.00",
        "actions/s                 2,000         1,500",
        "p99 act->ok (ms)           1.00          4.00",
    ]
    assert storage_cost(off, on) == ["storage costs 25% of throughput"]
    assert workers_gain(on, off, 2) == ["--workers 2 changes throughput by +33%"]


def test_a_tools_server_gets_its_flags_and_not_tulips_plays(tmp_path: Path) -> None:
    """Data directory, flags of its own, no bot delay and no --parent-pid."""
    server = LocalServer(["--sync", "full"], data_dir=tmp_path, bot_delay=None, follow_parent=False)
    assert server.command(1234) == [
        sys.executable, "-m", "server", "--host", "127.0.0.1", "--port", "1234",
        "--data-dir", str(tmp_path), "--log-level", "WARNING", "--sync", "full",
    ]  # fmt: skip
    play = LocalServer().command(1234)
    assert "--no-storage" in play and "--parent-pid" in play
    assert play[play.index("--bot-delay") + 1] == "0.6"


@pytest.mark.slow
def test_the_lobby_tool_measures_browsers_beside_a_real_load(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 45: ``tulips-loadtest lobby`` runs the load alone and beside its
    browsers on real servers, and says what the browsers received."""
    flags = ["--browsers", "30", "--page", "4", "--matches", "3", "--think", "0"]
    code = cli.main(["lobby", *flags, "--duration", "4"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "30 browsers asking a page of 4" in out
    assert "match changes" in out and "browsers received" in out
    assert "0 browsers closed by the server" in out
