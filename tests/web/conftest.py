"""Fixtures of the browser-front tests.

Each browser session runs a real ``tulips connect`` process, whose language
comes from the environment: the tests pin it to English.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Client processes draw in English, whatever the machine's locale."""
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    yield
