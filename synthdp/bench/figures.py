"""What the accuracy benchmarks write: markdown tables, and a row of error-against-epsilon panels (log axis)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from synthdp.core.extras import require
from synthdp.files.csvfile import atomic_path


@contextmanager
def epsilon_panels(count: int, path: Path, ylabel: str) -> Iterator[list]:
    """Yield ``count`` matplotlib axes in a row for the caller to draw and title.

    On a normal exit each panel gets a log epsilon axis, ``ylabel`` and a
    legend, and the figure is written to ``path`` as PNG (temporary file,
    then rename); the figure is closed either way.  matplotlib is the
    ``plot`` extra: a clear message names it when it is missing.
    """
    require("matplotlib", "the benchmark plots").use("Agg")  # before pyplot is first imported
    plt = require("matplotlib.pyplot", "the benchmark plots")

    fig, axes = plt.subplots(1, count, figsize=(4.5 * count, 3.6), squeeze=False)
    try:
        yield list(axes[0])
        for ax in axes[0]:
            ax.set_xscale("log")
            ax.set_xlabel("epsilon")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=7)
        fig.tight_layout()
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="png", dpi=120)
    finally:
        plt.close(fig)


def write_tables_and_figure(out: Path, tables: str, draw: Callable[[Path], None], figure: str) -> None:
    """Write ``tables`` to ``out/results.md`` (atomically) and ``draw`` the figure to ``out/figure``; print both paths."""
    with atomic_path(out / "results.md") as tmp:
        tmp.write_text(tables)
    draw(out / figure)
    print(tables)
    print(f"wrote {out / 'results.json'}, {out / 'results.md'}, {out / figure}")
