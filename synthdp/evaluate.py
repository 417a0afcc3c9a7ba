"""Old path of :mod:`synthdp.evaluation.marginals`: kept until issue 29's second part (``synthdp.cli`` and
``synthdp.bench.accuracy`` still import it here)."""

from synthdp.evaluation.marginals import marginal_errors, plot_format, save_plot

__all__ = ["marginal_errors", "plot_format", "save_plot"]
