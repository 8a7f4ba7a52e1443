"""The one report of ``tulips-loadtest``: what a load run measured
(:class:`LoadReport`), a run under its title (:func:`section`), two runs side
by side (:func:`side_by_side`, with :func:`storage_cost` or
:func:`workers_gain` as the verdict), runs as ratios to the reference server
(:func:`against_reference`), and a soak's targets (:func:`target_lines`).

Every mode prints through these, so a figure reads the same wherever it appears.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "LoadReport",
    "against_reference",
    "efficiency",
    "section",
    "side_by_side",
    "storage_cost",
    "target_lines",
    "workers_gain",
]


@dataclass
class LoadReport:
    """What one load run measured."""

    matches: int = 0
    actions: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    connections: int = 0
    memory_before: int | None = None
    memory_loaded: int | None = None
    #: CPU seconds (user + system) the server process used while measuring
    server_cpu: float | None = None
    #: the machine's 1-minute load average when measuring began and ended
    load: tuple[float, float] | None = None
    #: the run is over and its sessions are being closed
    closing: bool = False
    #: post-game analyses asked for beside the measured matches (``--analyses``),
    #: and how many of them were answered while measuring
    analysers: int = 0
    analyses: int = 0
    #: seconds each of those took, from request to answer (queueing included)
    analysis_seconds: list[float] = field(default_factory=list)
    #: the measured matches' changes while measuring (a first seat's ``match_update``s)
    match_changes: int = 0

    def error(self, kind: str) -> None:
        """Count one error of this kind (none once the run is tearing down: closing
        a match's sessions fails the requests still on their way)."""
        if self.closing:
            return
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1

    def percentile(self, q: float) -> float:
        """Latency percentile in milliseconds (0 when nothing was measured)."""
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] * 1000

    @property
    def rate(self) -> float:
        """Actions per second (wall clock)."""
        return self.actions / self.elapsed if self.elapsed else 0.0

    @property
    def cpu_per_1000(self) -> float | None:
        """Server CPU seconds per 1,000 actions: the figure a busy machine
        disturbs least (None without a server process to read)."""
        if self.server_cpu is None or not self.actions:
            return None
        return self.server_cpu / self.actions * 1000

    def lines(self) -> list[str]:
        """The report, a line per figure."""
        out = [
            f"elapsed           {self.elapsed:8.1f} s",
            f"connections       {self.connections:8d}",
            f"matches completed {self.matches:8d}   ({self.matches / self.elapsed:.2f}/s)",
            f"actions           {self.actions:8d}   ({self.actions / self.elapsed:,.0f}/s)",
            f"latency act->ok   p50 {self.percentile(50):.2f} ms   p99 {self.percentile(99):.2f} ms"
            f"   max {max(self.latencies, default=0) * 1000:.1f} ms",
            f"errors            {self.errors:8d}   {self.error_kinds or ''}",
        ]
        if self.analysers:
            took = self.analysis_seconds
            mean = sum(took) / len(took) if took else 0.0
            out.append(
                f"analyses beside   {self.analyses:8d}   answered while measuring,"
                f" {self.analysers} players asking in turn; each took"
                f" {mean:.1f} s mean, {max(took, default=0.0):.1f} s max (4 seats, 1 analysed)"
            )
        per_1000 = self.cpu_per_1000
        if per_1000 is not None:
            out.append(
                f"server CPU        {per_1000:8.3f} s per 1,000 actions"
                f"   ({1000 / per_1000:,.0f} actions per CPU-second)"
            )
        if self.load is not None:
            out.append(f"load average      {self.load[0]:8.2f} -> {self.load[1]:.2f}   (1 min)")
        if self.memory_before is not None and self.memory_loaded is not None:
            grown = self.memory_loaded - self.memory_before
            per = grown / self.connections if self.connections else 0
            out.append(
                f"server memory     {self.memory_before / 2**20:.1f} MiB idle,"
                f" {self.memory_loaded / 2**20:.1f} MiB loaded:"
                f" {per / 1024:.1f} KiB per connected player"
            )
        return out


def section(title: str, report: LoadReport) -> list[str]:
    """One run's report under its title."""
    return [f"-- {title}", *report.lines()]


def _rate(report: LoadReport) -> float:
    return report.actions / report.elapsed if report.elapsed else 0.0


def _matches(report: LoadReport) -> float:
    return report.matches / report.elapsed if report.elapsed else 0.0


def side_by_side(first: str, one: LoadReport, second: str, other: LoadReport) -> list[str]:
    """Two runs under the same load, the figures that matter in two columns."""
    return [
        f"-- side by side      {first:>11}   {second}",
        f"matches/s           {_matches(one):11.2f}   {_matches(other):11.2f}",
        f"actions/s           {_rate(one):11,.0f}   {_rate(other):11,.0f}",
        f"p99 act->ok (ms)    {one.percentile(99):11.2f}   {other.percentile(99):11.2f}",
    ]


def storage_cost(off: LoadReport, on: LoadReport) -> list[str]:
    """What storage costs: throughput, and the server's CPU where both were measured."""
    cost = 1 - _rate(on) / _rate(off) if _rate(off) else 0.0
    out = [f"storage costs {cost:.0%} of throughput"]
    off_cpu, on_cpu = off.cpu_per_1000, on.cpu_per_1000
    if off_cpu and on_cpu:
        out.append(
            f"server CPU per 1,000 actions {off_cpu:.3f} s -> {on_cpu:.3f} s:"
            f" storage costs {1 - off_cpu / on_cpu:.0%} of the server's CPU"
        )
    return out


def workers_gain(one: LoadReport, many: LoadReport, workers: int) -> list[str]:
    """How much ``--workers N`` changes throughput over one process."""
    gain = _rate(many) / _rate(one) - 1 if _rate(one) else 0.0
    return [f"--workers {workers} changes throughput by {gain:+.0%}"]


def efficiency(reports: dict[str, LoadReport]) -> dict[str, float]:
    """Each run's actions per server CPU-second as a share of the reference's
    (1.0: as cheap as the bare stack), where both were measured."""
    ref_cpu = reports["reference"].cpu_per_1000
    out = {}
    for name, report in reports.items():
        cpu = report.cpu_per_1000
        if name != "reference" and cpu and ref_cpu:
            out[name] = ref_cpu / cpu
    return out


def against_reference(reports: dict[str, LoadReport]) -> list[str]:
    """Each run's figures as ratios to the reference's (``reports["reference"]``),
    measured under the same load.

    ``efficiency`` is actions per server CPU-second as a share of the
    reference's (1.0: as cheap as the bare stack); ``throughput`` actions/s as
    a share of the reference's; ``p99`` the p99 latency in multiples of the
    reference's.
    """
    reference = reports["reference"]
    out = ["-- against the reference (same load, same machine, run just after)"]
    ref_cpu = reference.cpu_per_1000
    shares = efficiency(reports)
    for name, report in reports.items():
        if name == "reference":
            continue
        cpu = report.cpu_per_1000
        share = f"{shares[name]:.2f}x" if name in shares else "n/a"
        throughput = report.rate / reference.rate if reference.rate else 0.0
        ref_p99 = reference.percentile(99)
        p99 = f"{report.percentile(99) / ref_p99:.1f}x" if ref_p99 else "n/a"
        cpu_text = f"{cpu:.3f}" if cpu is not None else "n/a"
        out.append(
            f"{name:14s} server CPU {cpu_text} s/1000 actions vs {ref_cpu or 0:.3f}:"
            f" efficiency {share}   throughput {throughput:.2f}x   p99 {p99}"
        )
    return out


def target_lines(targets: Sequence[tuple[str, bool, str]]) -> list[str]:
    """A soak's ``(target, met, figure)`` list, a line each, under "targets"."""
    out = ["targets"]
    for target, met, figure in targets:
        out.append(f"  [{'ok' if met else 'MISSED':<6}] {target:<36} {figure}")
    return out
