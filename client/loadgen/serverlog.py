"""A soak's server log, read so that nobody has to: :func:`scan_log` counts the
tracebacks in it and keeps the first line of each, so that a soak
(``tulips-loadtest hostile``, ``crash-soak``) can report what went wrong;
:func:`keep_log` copies it out of its temporary directory when asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LogScan", "keep_log", "scan_log"]


@dataclass
class LogScan:
    """What a server log holds that a person should hear about."""

    tracebacks: int = 0
    #: each distinct traceback's last line (the exception) with how many times it came
    exceptions: dict[str, int] = field(default_factory=dict)
    #: each distinct traceback's first log line (what the server was doing)
    contexts: dict[str, str] = field(default_factory=dict)
    errors: int = 0  #: lines logged at ERROR or CRITICAL
    warnings: int = 0  #: lines logged at WARNING
    size: int = 0

    def lines(self, limit: int = 5) -> list[str]:
        """The distinct tracebacks, most frequent first, at most ``limit`` of them."""
        ranked = sorted(self.exceptions.items(), key=lambda item: -item[1])
        out = []
        for exception, count in ranked[:limit]:
            out.append(f"    {count:6d} x {exception[:160]}")
            context = self.contexts.get(exception)
            if context:
                out.append(f"             after: {context[:150]}")
        return out


def scan_log(path: Path) -> LogScan:
    """Count tracebacks and ERROR/WARNING lines in a server log (read as a stream)."""
    scan = LogScan()
    if not path.exists():
        return scan
    scan.size = path.stat().st_size
    previous = ""
    in_traceback = chained = False
    context = last = ""
    with open(path, errors="replace") as log:
        for raw in log:
            line = raw.rstrip("\n")
            if line.startswith("Traceback (most recent call last)"):
                if not chained:  # a chained one belongs to the traceback before it
                    scan.tracebacks += 1
                    context = previous
                in_traceback, chained = True, False
            elif line.startswith(("During handling of the above", "The above exception")):
                chained = True  # the exception just counted is replaced by the next one
                if last and scan.exceptions.get(last, 0) > 0:
                    scan.exceptions[last] -= 1
                    if not scan.exceptions[last]:
                        del scan.exceptions[last]
                last = ""
            elif in_traceback and line and not line.startswith((" ", "\t")):
                in_traceback = False
                last = line
                scan.exceptions[line] = scan.exceptions.get(line, 0) + 1
                scan.contexts.setdefault(line, context)
            if " ERROR " in line or " CRITICAL " in line:
                scan.errors += 1
            elif " WARNING " in line:
                scan.warnings += 1
            if line:
                previous = line
    return scan


def keep_log(log_path: Path, keep: Path | None) -> str:
    """Copy the log to ``keep`` (if given) before its temporary directory goes;
    where a person can read it afterwards."""
    if keep is None:
        return "deleted with its temp dir; --keep-log PATH keeps it"
    keep.write_bytes(log_path.read_bytes() if log_path.exists() else b"")
    return str(keep)
