"""The figures of the quality report (:mod:`synthdp.quality`): what it measured, read by its summary, its JSON
and its page (:mod:`synthdp.evaluation.html`).

They draw no page, so that the report (which writes its page) and the page's renderer (which reads them) both
import them from here, and neither the other.  **For the data owner only**: statistics of the real data.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from synthdp.evaluation.efficacy import Efficacy
from synthdp.evaluation.worst_case import WorstCase

#: The mark on every output of the report.
OWNER_ONLY = ("FOR THE DATA OWNER ONLY, NOT FOR PUBLICATION: this report holds statistics of the real data "
              "(it is not differentially private)")
#: The worst parts of the score are the means of this share of the lowest column and pair scores (at least one).
WORST_SHARE = 0.1
#: The parts of the score, averaged with equal weights; the others of :meth:`QualityFigures.parts` are shown beside.
SCORE_PARTS = ("columns", "worst columns", "pair trends", "worst pairs")


@dataclass(frozen=True)
class ColumnShape:
    """One column's figures: its shape score (``metric``: KS or TV complement), its missing shares, its values
    and support scores (:func:`~synthdp.evaluation.similarity.values_score`,
    :func:`~synthdp.evaluation.similarity.support_score`) and whether it came back constant."""

    column: str
    kind: str
    metric: str
    score: float
    real_missing: float
    synthetic_missing: float
    values: float
    support: float
    constant: bool

    @property
    def missing_score(self) -> float:
        """``1 - |real_missing - synthetic_missing|``."""
        return 1.0 - abs(self.real_missing - self.synthetic_missing)

    @property
    def column_score(self) -> float:
        """The lowest of the shape, values, support and missing scores; 0 for a column that came back constant
        (it tells nothing of the real column, and no pair with it can hold a trend)."""
        return 0.0 if self.constant else min(self.score, self.values, self.support, self.missing_score)


@dataclass(frozen=True)
class PairTrend:
    """One pair's trend score; ``real`` / ``synthetic`` are the correlations when ``metric`` is correlation."""

    columns: tuple[str, str]
    metric: str
    score: float
    real: float | None = None
    synthetic: float | None = None


@dataclass(frozen=True)
class PointMass:
    """An exact value of a column and its shares of the rows of both tables."""

    column: str
    value: str
    real: float
    synthetic: float


@dataclass(frozen=True)
class Distribution:
    """A column's picture: shares of each bin (``edges`` for numbers and dates, else category ``labels``) among
    the rows with a value, and the missing shares."""

    column: str
    kind: str
    labels: tuple[str, ...]
    real: tuple[float, ...]
    synthetic: tuple[float, ...]
    edges: tuple[float, ...] = ()
    real_missing: float = 0.0
    synthetic_missing: float = 0.0


@dataclass(frozen=True)
class PairTable:
    """The two-way tables of shares of one pair's bins in both tables."""

    columns: tuple[str, str]
    row_labels: tuple[str, ...]
    column_labels: tuple[str, ...]
    real: tuple[tuple[float, ...], ...]
    synthetic: tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class QualityFigures:
    """What the quality report holds (:class:`synthdp.quality.QualityReport`, which adds the page).  **For the
    data owner only**: statistics of the real data.  ``correlations`` holds the number/date columns' Pearson
    matrices (``names``, ``real``, ``synthetic``) when there are two or more such columns."""

    score: float
    shapes: tuple[ColumnShape, ...]
    trends: tuple[PairTrend, ...]
    point_masses: tuple[PointMass, ...]
    warnings: tuple[str, ...]
    distributions: tuple[Distribution, ...]
    worst_pairs: tuple[PairTable, ...]
    correlations: dict[str, Any]
    n_real: int
    n_synthetic: int
    efficacy: Efficacy | None = None
    worst_case: WorstCase | None = None
    release: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def shape_score(self) -> float:
        """Mean column-shape score, 0-1."""
        return float(np.mean([s.score for s in self.shapes]))

    @property
    def trend_score(self) -> float | None:
        """Mean pair-trend score, 0-1 (None with one column)."""
        return float(np.mean([t.score for t in self.trends])) if self.trends else None

    @property
    def missing_score(self) -> float:
        """Mean missing-share score, 0-1."""
        return float(np.mean([s.missing_score for s in self.shapes]))

    def score_parts(self) -> dict[str, float]:
        """The parts the score is the mean of (:func:`parts_of`), 0-100; the pairs' two are left out with one
        column."""
        return {k: 100.0 * v for k, v in parts_of(self.shapes, self.trends).items() if v is not None}

    def parts(self) -> dict[str, float | None]:
        """The score's parts (:meth:`score_parts`) and the figures shown beside it, 0-100."""
        return {**self.score_parts(), "column shapes": 100.0 * self.shape_score,
                "missing values": 100.0 * self.missing_score}

    def summary(self) -> str:
        """A few lines for a person: the score, its parts, efficacy, worst case and warnings."""
        parts, in_score = self.parts(), self.score_parts()
        mean = ", ".join(f"{k} {v:.1f}" for k, v in in_score.items())
        beside = ", ".join(f"{k} {v:.1f}" for k, v in parts.items() if k not in in_score)
        lines = [OWNER_ONLY, f"quality score {self.score:.1f}/100, the mean of {mean} (beside it: {beside}); "
                 f"{self.n_real} real rows, {self.n_synthetic} synthetic rows"]
        if self.efficacy is not None:
            e = self.efficacy
            lines.append(f"ML efficacy ({e.target}, {e.metric} on {e.test_rows} real test rows): trained on "
                         f"synthetic {e.synthetic:.3f}, on real {e.real:.3f}")
        if self.worst_case is not None:
            lines.append(self.worst_case.summary())
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)

    def __str__(self) -> str:
        """The summary (:meth:`summary`), as ``synthdp evaluate`` prints it."""
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """Everything on the page as JSON-ready data (marked owner-only)."""
        out = {"warning": OWNER_ONLY, "score": self.score, "parts": self.parts(), "n_real": self.n_real,
               "n_synthetic": self.n_synthetic,
               "shapes": [{**asdict(s), "missing_score": s.missing_score, "column_score": s.column_score}
                          for s in self.shapes],
               "trends": [asdict(t) for t in self.trends], "point_masses": [asdict(p) for p in self.point_masses],
               "warnings": list(self.warnings), "distributions": [asdict(d) for d in self.distributions],
               "worst_pairs": [asdict(p) for p in self.worst_pairs], "correlations": self.correlations,
               "efficacy": None if self.efficacy is None else self.efficacy.to_dict(),
               "worst_case": None if self.worst_case is None else self.worst_case.to_dict(),
               "release": self.release}
        return json.loads(json.dumps(out))  # tuples as lists, as the JSON file has them



def worst_mean(scores: list[float]) -> float:
    """The mean of the lowest :data:`WORST_SHARE` of ``scores`` (at least one of them)."""
    kept = max(1, math.ceil(WORST_SHARE * len(scores)))
    return float(np.mean(np.sort(scores)[:kept]))


def parts_of(shapes: tuple[ColumnShape, ...], trends: tuple[PairTrend, ...]) -> dict[str, float | None]:
    """The score's parts (:data:`SCORE_PARTS`), 0-1: the mean column score and the mean of the worst tenth
    (:func:`worst_mean`), and the same of the pair trends (None without pairs)."""
    columns = [s.column_score for s in shapes]
    pairs = [t.score for t in trends]
    return dict(zip(SCORE_PARTS, (float(np.mean(columns)), worst_mean(columns),
                                  float(np.mean(pairs)) if pairs else None, worst_mean(pairs) if pairs else None)))
