"""Fixtures shared by the measure method's tests."""

from __future__ import annotations

import math

import pytest

from synthdp.methods.measure import coarse


@pytest.fixture
def full_views_only(monkeypatch):
    """Full views only, no covering view (docs/privacy.md §8.11 step 1), for tests whose small domains read views
    of 8 groups on columns of 16 and 20 cells; the rule itself (full views, and the covering views) is tested in
    test_cover_views.py."""
    monkeypatch.setattr(coarse, "COVER_VIEW_GROUPS", math.inf)
