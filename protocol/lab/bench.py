"""``python -m protocol.lab.bench``: what decoding, validating and encoding cost.

For a typical 4-player snapshot and a typical action
(:data:`protocol.examples.SNAPSHOT_4P`, :data:`protocol.examples.ACT`) it
prints microseconds per message for :func:`protocol.decode_server_message` /
:func:`protocol.decode_client_message` (decode and validate) and for
:func:`protocol.encode`, next to a bare ``msgpack.unpackb`` / ``msgpack.packb``
of the same bytes, which builds plain dicts and validates nothing.

The target (issue 3): decoding with validation costs at most twice a bare
``msgpack.unpackb`` of the same bytes. The ``ratio`` column is that quotient;
the exit status is 1 when it is above :data:`TARGET_RATIO`.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from dataclasses import dataclass

import msgpack

from ..codec import decode_client_message, decode_server_message, encode
from ..examples import ACT, SNAPSHOT_4P
from ..messages import Message

__all__ = ["TARGET_RATIO", "Result", "main", "measure", "microseconds"]

#: Decode + validate may cost at most this many bare ``msgpack.unpackb`` calls.
TARGET_RATIO = 2.0


@dataclass(frozen=True, slots=True)
class Result:
    """The costs of one message, in microseconds per message."""

    name: str
    size: int
    unpackb: float
    decode: float
    packb: float
    encode: float

    @property
    def ratio(self) -> float:
        """Decode and validate, in bare ``msgpack.unpackb`` calls."""
        return self.decode / self.unpackb


def microseconds(func: Callable[[], object], seconds: float, repeats: int) -> float:
    """The best time of ``func`` over ``repeats`` runs of about ``seconds`` each."""
    timer = timeit.Timer(func)
    number = 1
    while (elapsed := timer.timeit(number)) < seconds / 10:
        number *= 2
    number = max(1, int(number * seconds / max(elapsed, 1e-9)))
    return min(timer.repeat(repeat=repeats, number=number)) / number * 1e6


def measure(
    name: str,
    message: Message,
    decode: Callable[[bytes], object],
    seconds: float = 0.2,
    repeats: int = 5,
) -> Result:
    """Time decoding and encoding ``message``, and msgpack's bare equivalents."""
    data = encode(message)
    plain = msgpack.unpackb(data)
    return Result(
        name=name,
        size=len(data),
        unpackb=microseconds(lambda: msgpack.unpackb(data), seconds, repeats),
        decode=microseconds(lambda: decode(data), seconds, repeats),
        packb=microseconds(lambda: msgpack.packb(plain), seconds, repeats),
        encode=microseconds(lambda: encode(message), seconds, repeats),
    )


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 if a ratio misses the target."""
    parser = argparse.ArgumentParser(
        prog="python -m protocol.lab.bench",
        description="Microseconds to decode and validate, and to encode, a typical snapshot"
        " and action, next to bare msgpack; exit status 1 when decoding costs more than"
        f" {TARGET_RATIO:g} bare unpackb calls.",
    )
    parser.add_argument("--seconds", type=float, default=0.2, help="length of one run")
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure; the best counts")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be positive and --repeats at least 1")
    results = [
        measure(
            "4-player snapshot", SNAPSHOT_4P, decode_server_message, args.seconds, args.repeats
        ),
        measure("action (act)", ACT, decode_client_message, args.seconds, args.repeats),
    ]
    print(
        "µs per message       bytes  msgpack.unpackb  decode+validate  ratio  msgpack.packb  encode"
    )
    for r in results:
        print(
            f"{r.name:<18} {r.size:>7} {r.unpackb:>16.2f} {r.decode:>16.2f} "
            f"{r.ratio:>6.2f} {r.packb:>14.2f} {r.encode:>7.2f}"
        )
    worst = max(r.ratio for r in results)
    verdict = "meets" if worst <= TARGET_RATIO else "MISSES"
    print(f"decode+validate / msgpack.unpackb: at most {worst:.2f}x ({verdict} {TARGET_RATIO:g}x)")
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
