"""Fixtures of the storage tests: server processes that never outlive a test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from .helpers import Servers


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[Servers]:
    """Start ``python -m server`` processes; any still running are killed after the test."""
    logs = tmp_path / "logs"
    logs.mkdir()
    manager = Servers(logs)
    try:
        yield manager
    finally:
        await manager.aclose()
