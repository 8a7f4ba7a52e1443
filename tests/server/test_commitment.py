"""The seed commitment of an open-box match (R27): its byte layout, the
example PROTOCOL.md shows, and what it refuses."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

import protocol as wire
from protocol import examples
from server.match import commands as c
from server.match.commitment import SALT_BYTES, commitment, new_salt, preimage, verify

from .core_driver import SEED, Driver, new_core


def test_r27_the_preimage_is_salt_then_seed_big_endian() -> None:
    """Bytes 0–31 are the salt, 32–39 the seed as an unsigned big-endian int."""
    salt = bytes(range(SALT_BYTES))
    data = preimage(salt, 0x0102030405060708)
    assert data == salt + bytes([1, 2, 3, 4, 5, 6, 7, 8])
    assert commitment(salt, 0x0102030405060708) == hashlib.sha256(data).hexdigest()


def test_r27_the_documented_example_checks() -> None:
    """PROTOCOL.md's open-box example: its summary's commitment is its replay's salt and seed."""
    salt = bytes.fromhex(examples.OPEN_BOX_SALT)
    assert commitment(salt, examples.OPEN_BOX_SEED) == examples.OPEN_BOX_COMMITMENT
    update = examples.SERVER_EXAMPLES["match_update"]
    page = examples.SERVER_EXAMPLES["replay"]
    assert isinstance(update, wire.MatchUpdate) and isinstance(page, wire.ReplayPage)
    assert update.match.open_box and update.match.seed_commitment == examples.OPEN_BOX_COMMITMENT
    assert (page.seed, page.salt) == (examples.OPEN_BOX_SEED, examples.OPEN_BOX_SALT)


def test_r27_verify_accepts_only_the_committed_seed_and_salt() -> None:
    """Another seed, or another salt, does not match the commitment."""
    salt = new_salt()
    published = commitment(salt, 2**63 - 1)
    assert len(published) == 64 and published == published.lower()
    assert verify(published, salt, 2**63 - 1)
    assert verify(published.upper(), salt, 2**63 - 1)
    assert not verify(published, salt, 2**63 - 2)
    assert not verify(published, new_salt(), 2**63 - 1)


def test_salts_are_fresh() -> None:
    """Every match gets its own 32 random bytes."""
    salts = {new_salt() for _ in range(50)}
    assert len(salts) == 50 and all(len(s) == SALT_BYTES for s in salts)


@pytest.mark.parametrize(
    ("salt", "seed", "why"),
    [
        (b"short", 1, "a salt is 32 bytes"),
        (bytes(32), -1, "not an unsigned 64-bit"),
        (bytes(32), 2**64, "not an unsigned 64-bit"),
    ],
)
def test_bad_salts_and_seeds_are_refused(salt: bytes, seed: int, why: str) -> None:
    """A salt of the wrong size or a seed out of range is an error, never a hash."""
    with pytest.raises(ValueError, match=why):
        commitment(salt, seed)


def test_r27_every_seat_sees_the_commitment_before_its_cards() -> None:
    """An open-box deal: each player's match update carrying the commitment
    arrives before the snapshot with their cards, so a client can tell the
    seed was fixed before it saw a card (core driven with a fake clock)."""
    core = new_core(3, [(2, "easy")], host="Ada")
    core.settings = dataclasses.replace(core.settings, open_box=True)
    driver = Driver(core)
    ada, bea = driver.connect("Ada"), driver.connect("Bea")
    driver.do(c.Open(ada.number, ada.who, 0, driver.request_id()))
    driver.do(c.Join(bea.number, bea.who, None, None, driver.request_id()))
    salt = bytes(range(SALT_BYTES))
    driver.do(c.Start(ada.number, ada.who, SEED, salt, driver.request_id()))
    for conn in (ada, bea):
        kinds = [m["type"] for m in conn.messages]
        committed = next(
            i
            for i, m in enumerate(conn.messages)
            if m["type"] == "match_update" and m["match"].get("seed_commitment")
        )
        assert conn.messages[committed]["match"]["seed_commitment"] == commitment(salt, SEED)
        assert committed < kinds.index("snapshot"), kinds
