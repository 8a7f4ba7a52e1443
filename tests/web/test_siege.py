"""``python -m server.lab.web.siege``, the bench of issue 29's figures ("the time a
newcomer waits on the game port during a 2,000-connection slowloris on the web
port; the log size after it"), run small: it starts a real server, lays a
short siege and prints what the README quotes."""

from __future__ import annotations

import re

import pytest

from server.lab.web import siege


@pytest.mark.slow
def test_a_short_siege_prints_the_waits_and_the_log_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """60 slowloris connections for 3 s: every newcomer is welcomed, the page
    is served to another address, and the log has no traceback."""
    assert siege.main(["--connections", "60", "--duration", "3", "--every", "0.5"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"opened [\d,]+ times: [\d,]+ refused at once", out), out
    assert re.search(
        r"newcomer on the game port, hello to welcome: \d+ samples, .* \(0 failed\)", out
    )
    assert "statuses [200]" in out
    assert re.search(r"its log [\d.]+ KiB, \d+ lines, 0 tracebacks", out), out


def test_nonsense_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """A siege of no connections is a usage error."""
    with pytest.raises(SystemExit) as exited:
        siege.main(["--connections", "0"])
    assert exited.value.code == 2
    assert "must be more than 0" in capsys.readouterr().err
