"""The data owner's (non-private) check of a synthetic table against the real one.

For every marginal of a workload it reports the largest absolute cell error
and the total-variation distance, both on normalised (fraction) scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from synthdp.core.data import AggregatedData
from synthdp.core.errors import InputError
from synthdp.core.extras import require
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.core.progress import RoundProgress


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

    def to_dict(self) -> dict:
        """JSON-ready: the summary figures and every marginal's errors (``synthdp evaluate --json``)."""
        return {"marginals": len(self.marginals), "max_error": self.max_error,
                "mean_max_error": self.mean_max_error, "mean_tv": self.mean_tv,
                "per_marginal": self.to_frame().to_dict(orient="records")}

    def summary(self) -> str:
        return (f"{len(self.marginals)} marginals: max error {self.max_error:.4f}, "
                f"mean max error {self.mean_max_error:.4f}, mean TV {self.mean_tv:.4f}")


def marginal_errors(real: AggregatedData, synthetic: AggregatedData, attr_sets: list[tuple[int, ...]], *,
                    progress: bool = False) -> ErrorReport:
    """Errors of ``synthetic`` against ``real`` on the marginals ``attr_sets`` (attribute indices).

    ``progress=True`` shows a bar on a terminal, or a line every few seconds
    with an estimate of the time left in logs (all 3-way marginals of 200
    columns are 1.3 million tables).  This is the owner's non-private check:
    its timings may show.
    """
    bar = RoundProgress(len(attr_sets), enabled=progress, desc="synthdp evaluate", unit="marginal")
    out = []
    for done, attrs in enumerate(attr_sets, 1):
        p = real.marginal(attrs).ravel() / max(real.n, 1)
        s = synthetic.marginal(attrs).ravel() / max(synthetic.n, 1)
        diff = np.abs(p - s)
        out.append(MarginalError(tuple(real.domain.names[a] for a in attrs), float(diff.max()), float(0.5 * diff.sum())))
        bar.update(done)
    bar.close()
    return ErrorReport(out)


#: File suffixes a plot may have, and the format each is written in.
PLOT_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
#: Marginals drawn one by one; the rest of a larger workload is shown as a distribution.
PLOT_WORST = 30


def plot_format(path) -> str:
    """The plot format named by the suffix of ``path``; an :class:`InputError` for any other suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise InputError(f"--plot {str(path)!r}: unknown plot format {suffix or '(no suffix)'!r}; name the file "
                         f"with one of {', '.join(PLOT_FORMATS)}")
    return PLOT_FORMATS[suffix]


def save_plot(report: ErrorReport, path, fmt: str = "png") -> None:
    """Draw the per-marginal errors into ``path`` (written directly) in format ``fmt``.

    Up to :data:`PLOT_WORST` marginals: one pair of bars (max cell error, TV
    distance) each.  More: the :data:`PLOT_WORST` worst marginals by max
    error, beside a histogram of the max error of all of them, so that the
    figure stays readable whatever the size of the workload.
    """
    require("matplotlib", "plotting").use("Agg")  # before pyplot is first imported
    plt = require("matplotlib.pyplot", "plotting")

    frame = report.to_frame().sort_values("max_error", ascending=False)
    worst = frame.head(PLOT_WORST).iloc[::-1]
    rest = len(frame) > PLOT_WORST
    fig, axes = plt.subplots(1, 2 if rest else 1, figsize=(12 if rest else 8, max(3.0, 0.25 * len(worst) + 1.5)),
                             squeeze=False)
    ax = axes[0, 0]
    y = np.arange(len(worst))
    ax.barh(y + 0.2, worst["max_error"], height=0.4, label="max cell error")
    ax.barh(y - 0.2, worst["tv_distance"], height=0.4, label="TV distance")
    ax.set_yticks(y, worst["marginal"], fontsize=7)
    ax.set_xlabel("error (fraction of rows)")
    ax.set_title(f"the {len(worst)} worst of {len(frame)} marginals" if rest else f"{len(frame)} marginals",
                 fontsize=9)
    ax.legend(fontsize=7)
    if rest:
        hist = axes[0, 1]
        hist.hist(frame["max_error"], bins=min(50, max(10, len(frame) // 10)), color="tab:gray")
        hist.axvline(worst["max_error"].min(), color="tab:red", linestyle="--",
                     label=f"cut-off of the {len(worst)} shown")
        hist.set_xlabel("max cell error (fraction of rows)")
        hist.set_ylabel("marginals")
        hist.set_title(f"all {len(frame)} marginals", fontsize=9)
        hist.legend(fontsize=7)
    fig.suptitle(report.summary(), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, format=fmt, dpi=120)
    plt.close(fig)


def plot_errors(report: ErrorReport, path) -> None:
    """:func:`save_plot` into ``path`` (format from its suffix), checked first and written atomically."""
    fmt = plot_format(path)
    out = check_outputs({"--plot": path})["--plot"]
    write_outputs([(out, lambda tmp: save_plot(report, tmp, fmt))])
