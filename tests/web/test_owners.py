"""The browser front's owners of state, on a fake clock, without sockets:
the seats (:mod:`server.web.seats`), the keys' homes (:mod:`server.web.tokens`),
the input budget (:mod:`server.web.inputs`), the Origin check
(:mod:`server.web.origin`) and the leftovers of a killed front
(:mod:`server.web.leftovers`). Issue 29's items are cited in each test."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.web.inputs import (
    BURST,
    MAX_HEIGHT,
    MAX_WIDTH,
    RATE,
    InputBudget,
    Resizes,
    terminal_size,
)
from server.web.leftovers import OWNER_FILE, PREFIX, make_private_directory, remove_stale
from server.web.origin import OriginPolicy
from server.web.seats import SeatBook, SeatRefused
from server.web.tokens import TokenShelf


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


KEYS = [f"{letter}" * 16 for letter in "abcdefghijklmnopqrstuvwxyz"]


def test_one_key_holds_one_seat_however_many_sockets_it_opens() -> None:
    """Issue 29, "one tab key past the cap": twelve sockets of one key are one
    seat; each replaces the one before, which is told so, and the seat is
    given back only when the last ticket is done."""
    book = SeatBook(max_sessions=2, per_address=2, clock=Clock())
    tickets = [book.admit(KEYS[0], "10.0.0.1") for _ in range(12)]
    assert len(book) == 1
    assert all(t.replaced.is_set() for t in tickets[:-1]) and not tickets[-1].replaced.is_set()
    assert [t.previous for t in tickets[1:]] == tickets[:-1]
    for ticket in tickets[:-1]:
        book.release(ticket)
    assert len(book) == 1  # the newest still holds it
    book.release(tickets[-1])
    assert len(book) == 0 and all(t.done.is_set() for t in tickets)


async def test_a_seat_stays_taken_while_a_replaced_client_runs() -> None:
    """Issue 29, "one tab key past the cap": a reload given up before it
    started (its socket gone while the old client still ends) does not give
    the seat back while that old client runs; the next reload of the key waits
    for it too, and once every client of the key has ended the seat is free."""
    book = SeatBook(max_sessions=1, per_address=1, clock=Clock())
    first = book.admit(KEYS[0], "10.0.0.1")  # its client runs
    given_up = book.admit(KEYS[0], "10.0.0.1")
    book.release(given_up)  # never started
    assert len(book) == 1
    with pytest.raises(SeatRefused):
        book.admit(KEYS[1], "10.0.0.2")
    again = book.admit(KEYS[0], "10.0.0.1")
    waiting = asyncio.ensure_future(again.predecessors_done())
    await asyncio.sleep(0)
    assert not waiting.done()  # the first client still runs
    book.release(first)
    await asyncio.wait_for(waiting, 1)
    assert len(book) == 1  # the reload holds it now
    book.release(again)
    assert len(book) == 0 and again.previous is None  # no history kept
    book.admit(KEYS[1], "10.0.0.2")


def test_the_cap_and_the_share_of_one_address() -> None:
    """Issue 29, "one visitor holds every browser seat": an address gets its
    share, the rest of the seats stay for others; a reload is never refused."""
    book = SeatBook(max_sessions=3, per_address=2, clock=Clock())
    book.admit(KEYS[0], "10.0.0.1")
    book.admit(KEYS[1], "10.0.0.1")
    with pytest.raises(SeatRefused, match="share"):
        book.admit(KEYS[2], "10.0.0.1")
    book.admit(KEYS[1], "10.0.0.1")  # a reload of a key it holds
    book.admit(KEYS[3], "10.0.0.2")
    with pytest.raises(SeatRefused, match=r"every browser seat is taken \(3 of 3\)"):
        book.admit(KEYS[4], "10.0.0.3")
    assert book.by_address() == {"10.0.0.1": 2, "10.0.0.2": 1}


def test_idle_tabs_are_found_by_their_last_input() -> None:
    """Issue 29, "idle tabs are never closed": a tab that does nothing for the
    timeout is idle; one that typed is not."""
    clock = Clock()
    book = SeatBook(max_sessions=4, per_address=4, clock=clock)
    quiet, busy = book.admit(KEYS[0], "a"), book.admit(KEYS[1], "a")
    clock.now += 50
    book.touch(busy)
    clock.now += 60
    assert book.idle(100) == [quiet]


def test_a_disconnected_players_token_survives_anyone_elses_tabs(tmp_path: Path) -> None:
    """Issue 29, "a reload can be broken by others": 66 fresh keys from another
    address push out only that address's own oldest keys."""
    clock = Clock()
    shelf = TokenShelf(tmp_path, per_address=8, total=1024, clock=clock)
    home = shelf.home_for(KEYS[0], "10.0.0.1")
    shelf.token_file(KEYS[0]).write_text("{}")
    for n in range(66):
        shelf.home_for(f"{n:016d}", "10.0.0.2")
        clock.now += 0.3
    assert shelf.token_file(KEYS[0]).exists() and home.is_dir()
    assert shelf.remembered() == 1 + 8
    assert len(list(tmp_path.iterdir())) == 1 + 8


def test_a_token_is_forgotten_after_its_idle_time_unless_in_use(tmp_path: Path) -> None:
    """Tokens are remembered ``keep_for`` after their last use, never while in use."""
    clock = Clock()
    shelf = TokenShelf(tmp_path, per_address=8, total=1024, keep_for=3600, clock=clock)
    shelf.home_for(KEYS[0], "a")
    shelf.home_for(KEYS[1], "b")
    clock.now += 3000
    shelf.touch(KEYS[1])
    clock.now += 700
    shelf.forget_old(in_use=())
    assert not (tmp_path / shelf.digest(KEYS[0])).exists()
    assert (tmp_path / shelf.digest(KEYS[1])).exists()
    clock.now += 3600
    shelf.forget_old(in_use={KEYS[1]})
    assert (tmp_path / shelf.digest(KEYS[1])).exists()
    assert all(KEYS[1] not in p.name for p in tmp_path.iterdir())  # named by a hash


def test_the_total_bounds_many_addresses(tmp_path: Path) -> None:
    """Past ``total`` (many addresses at once), the oldest keys go first."""
    shelf = TokenShelf(tmp_path, per_address=8, total=3, clock=Clock())
    for n, key in enumerate(KEYS[:5]):
        shelf.home_for(key, f"10.0.0.{n}")
    assert shelf.remembered() == 3
    assert not (tmp_path / shelf.digest(KEYS[0])).exists()


def test_the_input_budget_holds_a_flood_back() -> None:
    """Issue 29, "one tab can burn a core": a burst passes, then the tab waits
    for its budget to refill (RATE bytes a second)."""
    clock = Clock()
    budget = InputBudget(clock)
    assert budget.take(BURST) == 0
    assert budget.take(1024) == pytest.approx(1024 / RATE)
    clock.now += 10
    assert budget.take(100) == 0  # refilled (up to the burst)


def test_resizes_are_coalesced_and_bounded() -> None:
    """Issue 29: a resize to 1000x1000 draws at most MAX_WIDTH x MAX_HEIGHT, and
    a storm of resizes is one resize per interval, the latest winning."""
    assert terminal_size(1000, 1000) == (MAX_WIDTH, MAX_HEIGHT)
    assert terminal_size("x", None) == (80, 24)
    assert terminal_size(1, -5) == (10, 10)
    clock = Clock()
    resizes = Resizes(clock, every=0.25)
    resizes.ask((100, 30))
    assert resizes.wait() == 0 and resizes.due() == (100, 30)
    for width in range(101, 150):
        resizes.ask((width, 30))
    assert resizes.due() is None and resizes.wait() == pytest.approx(0.25)
    clock.now += 0.25
    assert resizes.due() == (149, 30) and resizes.due() is None


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:8766", True),
        ("http://127.0.0.1:8766", True),
        ("http://127.0.0.5:8766", True),
        ("http://[::1]:8766", True),
        ("https://tulips.local:8766", True),
        ("http://192.168.1.20:8766", True),
        ("http://evil.example:8766", False),
        ("http://evil.example", False),
        ("http://localhost:9999", False),
        ("http://localhost", False),
        ("null", False),
        ("file://", False),
        ("http://allowed.example", True),
    ],
)
def test_the_origin_is_checked_against_the_servers_own_names(origin: str, allowed: bool) -> None:
    """Issue 29, DNS rebinding: an origin passes if it is one of the server's own
    names and addresses at the front's port, or one --allow-origin names; the
    request's Host is never the reference."""
    policy = OriginPolicy(
        {"localhost", "192.168.1.20", "tulips.local"}, 8766, ["http://allowed.example/"]
    )
    assert policy.allows(origin) is allowed


def test_allow_origin_star_allows_every_page() -> None:
    """``--allow-origin '*'`` is honoured by the front as by the game port."""
    assert OriginPolicy(set(), 8766, ["*"]).allows("http://evil.example")


def dead_pid() -> int:
    """The pid of a process that has ended."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True, timeout=30)  # fmt: skip
    return int(done.stdout)


def test_only_this_users_directories_of_dead_owners_are_removed(tmp_path: Path) -> None:
    """Issue 29, "token files stay in the temp dir after a SIGKILL": a front's
    directory whose owner is gone is removed at the next start; one whose owner
    lives, one without an owner file, and a symbolic link stay."""
    mine = make_private_directory(tmp_path)
    dead = make_private_directory(tmp_path)
    (dead / OWNER_FILE).write_text(f"{dead_pid()} 1\n")
    (dead / "x").mkdir()
    (dead / "x" / "identity.json").write_text("{}")
    unknown = tmp_path / f"{PREFIX}unknown"
    unknown.mkdir()
    link = tmp_path / f"{PREFIX}link"
    link.symlink_to(dead)
    assert mine.stat().st_mode & 0o777 == 0o700
    assert remove_stale(tmp_path) == [dead]
    assert mine.is_dir() and unknown.is_dir() and link.is_symlink() and not dead.exists()


def test_a_reused_pid_is_not_taken_for_the_owner(tmp_path: Path) -> None:
    """An owner file naming a live pid with another start time (the pid was
    reused) is stale."""
    reused = make_private_directory(tmp_path)
    (reused / OWNER_FILE).write_text(f"{os.getpid()} 1\n")
    assert remove_stale(tmp_path) == [reused]
