"""Certifiable solver oracles for the query player and the data player.

``get_oracle(name)`` returns a backend by name; see :mod:`synthdp.oracles.base` for
the contract every backend follows.
"""

from __future__ import annotations

import importlib

from synthdp.core.errors import InputError
from synthdp.oracles.base import (FAIL, NO_LIMITS, OPTIMAL, DataInstance, Limits, Oracle, OracleResult,
                          QueryInstance)

_BACKENDS = {
    "brute": ("synthdp.oracles.brute", "BruteForceOracle"),
    "exact": ("synthdp.oracles.exact", "ExactSearchOracle"),
    "cpsat": ("synthdp.oracles.cpsat", "CPSATOracle"),
    "cbc": ("synthdp.oracles.cbc", "CBCOracle"),
    "maxsat": ("synthdp.oracles.maxsat", "MaxSATOracle"),
}


def available_oracles() -> list[str]:
    """Names accepted by :func:`get_oracle`."""
    return list(_BACKENDS)


def get_oracle(name: str, **options) -> Oracle:
    """The backend called ``name`` (one of :func:`available_oracles`)."""
    if name not in _BACKENDS:
        raise InputError(f"unknown oracle {name!r}; choose one of {available_oracles()}")
    module, cls = _BACKENDS[name]
    return getattr(importlib.import_module(module), cls)(**options)


__all__ = ["FAIL", "NO_LIMITS", "OPTIMAL", "DataInstance", "Limits", "Oracle", "OracleResult",
           "QueryInstance", "available_oracles", "get_oracle"]
