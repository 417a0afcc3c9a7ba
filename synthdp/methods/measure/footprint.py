"""What a select-measure-estimate run will need, from public inputs only (the plan's up-front estimate).

Before any private step the plan states the rounds, the candidates a round
scores, the model's size and the memory the method will hold, and refuses a
run that would not fit the machine (docs/privacy.md §8.9).  Everything here
reads the domain, the options and the user's ``n_rows``; never the data.
The machine's memory is public too.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.methods.measure.coarse import CoarseViews
from synthdp.methods.measure.coverage import uses_covering_step
from synthdp.methods.measure.spanning import adaptive_rounds, uses_spanning_step

#: Bytes per model cell: potentials, marginals, beliefs, factors and gradients, and the trial step's copies.
BYTES_PER_MODEL_CELL = 96
#: Bytes per code of a record matrix (int64), and the copies a draw keeps (codes, keys, permutation).
BYTES_PER_CODE, SAMPLE_COPIES = 8, 3
#: Bytes per (measurement, support record) entry of the reweighting's design: a float64 and an int32 index, in the
#: sparse matrix and in its transpose (``synthdp.methods.measure.reweight``).
BYTES_PER_DESIGN_ENTRY = 24


@dataclass(frozen=True)
class Footprint:
    """The run's size, stated in the plan: rounds, candidates per round, model cells and memory (bytes)."""

    rounds: int
    spanning_pairs: int
    candidates: int
    scored_per_round: int
    model_cells: int
    memory_bytes: int
    #: Bytes per output record when ``n_rows`` is not given (the model's noisy total is not known up front).
    bytes_per_output_row: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        pairs = f"a spanning step of {self.spanning_pairs} pairs, then " if self.spanning_pairs else ""
        return (f"{pairs}at most {self.rounds} rounds scoring at most {self.scored_per_round} of {self.candidates} "
                f"candidates each; a model of at most {self.model_cells:,} cells; about "
                f"{self.memory_bytes / 2**20:,.0f} MB")


def footprint(domain: Domain, candidates: Sequence[tuple[int, ...]], options, *, n_rows: int | None,
              oracle: bool, pure: bool = False) -> Footprint:
    """The up-front estimate of a run over ``candidates`` with ``options`` (a ``MeasureOptions``); ``pure``: pure DP,
    whose covering step runs only when it pays (docs/privacy.md §8.10 step 0)."""
    d = len(domain)
    spanning = uses_spanning_step(d, candidates, options.spanning_from)
    rounds = options.max_rounds or (adaptive_rounds(d, options.rounds_per_sqrt_attribute) if spanning
                                    else options.rounds_per_attribute * d)
    # their coarse twins are candidates too, and alone for the largest (§8.11 step 2); a twin's counts are small
    views = CoarseViews.for_options(domain, options)
    every = sum(views.read_finely(r) for r in candidates) + sum(views.round_twin(r) is not None for r in candidates)
    scored = min(every, options.candidate_pool)
    cells = sorted((views.counted_cells(r) for r in candidates), reverse=True)
    true_counts = 8 * sum(cells[: min(len(cells), scored * rounds)])  # counted once, when first scored
    record = BYTES_PER_CODE * d
    sample = SAMPLE_COPIES * options.estimator.scoring_sample * record + options.estimator.scoring_sample * \
        sum(domain.sizes) // 8  # the draw and its bit sets
    covering = uses_covering_step(d, candidates, options, oracle=oracle, light_tailed=not pure)  # §8.10
    support = SAMPLE_COPIES * (options.support if oracle else options.cover_support if covering else 0) * record
    # at most one group per candidate, per round and per attribute, each with an entry per support record
    design = BYTES_PER_DESIGN_ENTRY * options.cover_support * (len(candidates) + rounds + d) if covering else 0
    memory = (BYTES_PER_MODEL_CELL * options.max_model_cells + true_counts + sample + support + design
              + (SAMPLE_COPIES * n_rows * record if n_rows else 0))
    return Footprint(rounds, d - 1 if spanning else 0, every, scored, options.max_model_cells, memory,
                     SAMPLE_COPIES * record)


def check_fits(estimate: Footprint, available: int | None) -> None:
    """Refuse, before any private step, a run whose memory estimate exceeds ``available`` bytes; say what to change."""
    if available is not None and estimate.memory_bytes > available:
        raise InputError(f"method 'measure' would need about {estimate.memory_bytes / 2**30:.1f} GB "
                         f"({estimate.summary()}), more than this machine's {available / 2**30:.1f} GB: ask for "
                         "fewer or lower-order queries (e.g. marginals:2), a smaller model cap "
                         "(measure_options=MeasureOptions(max_model_cells=...); CLI --measure-option max_model_cells=N), a "
                         "smaller candidate pool (candidate_pool, set the same way), or a coarser schema "
                         "(fewer categories per column)")
