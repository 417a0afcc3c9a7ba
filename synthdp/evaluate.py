"""The data owner's (non-private) check of a synthetic table against the real one.

For every marginal of a workload it reports the largest absolute cell error
and the total-variation distance, both on normalised (fraction) scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.core.data import AggregatedData


@dataclass(frozen=True)
class MarginalError:
    """Errors of one marginal: max absolute cell error and total variation."""

    attributes: tuple[str, ...]
    max_error: float
    tv_distance: float


@dataclass(frozen=True)
class ErrorReport:
    """Per-marginal errors and their summary over the workload."""

    marginals: list[MarginalError]

    @property
    def max_error(self) -> float:
        return max((e.max_error for e in self.marginals), default=0.0)

    @property
    def mean_max_error(self) -> float:
        return float(np.mean([e.max_error for e in self.marginals])) if self.marginals else 0.0

    @property
    def mean_tv(self) -> float:
        return float(np.mean([e.tv_distance for e in self.marginals])) if self.marginals else 0.0

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({
            "marginal": [" x ".join(e.attributes) for e in self.marginals],
            "max_error": [e.max_error for e in self.marginals],
            "tv_distance": [e.tv_distance for e in self.marginals],
        })

    def summary(self) -> str:
        return (f"{len(self.marginals)} marginals: max error {self.max_error:.4f}, "
                f"mean max error {self.mean_max_error:.4f}, mean TV {self.mean_tv:.4f}")


def marginal_errors(real: AggregatedData, synthetic: AggregatedData, attr_sets: list[tuple[int, ...]]) -> ErrorReport:
    """Errors of ``synthetic`` against ``real`` on the marginals ``attr_sets`` (attribute indices)."""
    out = []
    for attrs in attr_sets:
        p = real.marginal(attrs).ravel() / max(real.n, 1)
        s = synthetic.marginal(attrs).ravel() / max(synthetic.n, 1)
        diff = np.abs(p - s)
        out.append(MarginalError(tuple(real.domain.names[a] for a in attrs), float(diff.max()), float(0.5 * diff.sum())))
    return ErrorReport(out)


def plot_errors(report: ErrorReport, path) -> None:
    """Bar chart of the per-marginal max error and TV distance, written atomically as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from synthdp.core.io import atomic_path

    frame = report.to_frame().sort_values("max_error", ascending=False)
    fig, ax = plt.subplots(figsize=(max(6, 0.25 * len(frame)), 4))
    x = np.arange(len(frame))
    ax.bar(x - 0.2, frame["max_error"], width=0.4, label="max cell error")
    ax.bar(x + 0.2, frame["tv_distance"], width=0.4, label="TV distance")
    ax.set_xticks(x, frame["marginal"], rotation=90, fontsize=6)
    ax.set_ylabel("error (fraction of rows)")
    ax.set_title(report.summary())
    ax.legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
