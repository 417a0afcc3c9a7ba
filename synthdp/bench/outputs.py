"""Old path of :mod:`synthdp.bench.figures`: kept until issue 29's second part (``synthdp.bench.accuracy`` still
imports it here)."""

from synthdp.bench.figures import epsilon_panels, write_tables_and_figure

__all__ = ["epsilon_panels", "write_tables_and_figure"]
