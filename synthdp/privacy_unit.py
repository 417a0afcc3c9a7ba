"""The privacy unit's steps of a run (docs/privacy.md §10.6): the bounding every pass applies, and, under
``max_rows_per_unit="auto"``, ``k`` chosen privately as the run's first charge.
"""

from __future__ import annotations

import warnings

import pandas as pd

from synthdp.accounting.ledger import Ledger
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.domains import check_every_bound
from synthdp.engines import Rows
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.units import (AUTO_EPSILON_SHARE, Bounding, ChosenBound, bounding_key, choose_rows_per_unit,
                                      rows_per_unit)
from synthdp.plan import candidate_plans
from synthdp.run_schema import public_schema

__all__ = ["choose_bound", "contribution_bounding"]


def contribution_bounding(config: SynthesisConfig, rng: PrivateRandom):
    """The bounding of docs/privacy.md §10.6 (column, ``k``, key from a child of ``rng``), or None without a unit."""

    if config.privacy_unit is None:
        return None
    return Bounding(config.privacy_unit, config.max_rows_per_unit, bounding_key(rng))


def choose_bound(df: pd.DataFrame, config: SynthesisConfig, engine, ledger: Ledger, rng: PrivateRandom
                 ) -> ChosenBound:
    """``max_rows_per_unit="auto"``: ``k`` chosen privately with a public share of epsilon, the run's first charge,
    after every refusal that can come before it (docs/privacy.md §10.6, "Refusals before the choice of k"; §10.8).

    In order: the plan of every candidate ``k`` (public inputs only: the ``k`` whose plan passes are the range
    the choice ranges over), every value of the raw rows checked as the tally pass checks the kept rows later, and
    the domain stage's size checks at every candidate (for the owner).
    """
    rows, schema = raw_schema(df, config, engine)
    plans = candidate_plans(config, schema)
    tallies = engine.tally(rows.source, schema)
    held = rows_per_unit(df, config.privacy_unit)
    check_every_bound(tallies, held, schema, plans)
    return choose_rows_per_unit(held, candidates=tuple(plans), epsilon=ledger.epsilon_budget * AUTO_EPSILON_SHARE,
                                rng=rng, ledger=ledger, relation=config.relation)


def raw_schema(df: pd.DataFrame, config: SynthesisConfig, engine) -> tuple[Rows, Schema]:
    """Before ``k`` is chosen privately: the raw rows without the privacy unit's column, and the run's public
    schema built on them.  The schema's warnings are given once, by the run itself."""
    if config.privacy_unit not in df.columns:
        raise InputError(f"privacy unit column {config.privacy_unit!r} is not in the data, whose columns are "
                         f"{list(df.columns)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return public_schema(engine.prepare(df.drop(columns=[config.privacy_unit])), config, [], engine)
