"""Ratings, profiles and match history: openskill's Weng–Lin model over the
final rankings of rated matches (:mod:`.model`), the one owner that applies
each finished match exactly once (:mod:`.book`), where ratings are kept —
SQLite beside the matches, or memory (:mod:`.ledger`) — and the answers to
``profile``, ``leaderboard`` and ``history`` (:mod:`.cards`).
"""

from __future__ import annotations

from .model import BOT_IDS, Skill, default_rated

__all__ = ["BOT_IDS", "Skill", "default_rated"]
