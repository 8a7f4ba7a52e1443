"""Fixtures of the LAN tests: the terminal client's texts in plain English."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from client.tui import i18n


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    """Every test starts (and ends) in plain English."""
    i18n.set_language("en")
    yield
    i18n.set_language("en")
