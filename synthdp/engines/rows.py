"""The rows a run reads, as its counting engine prepared them (docs/privacy.md §10.6, §10.7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["Rows"]


@dataclass(frozen=True)
class Rows:
    """The table a run reads, prepared by its counting engine.

    In memory (``source`` a DataFrame) the rows are read, at most ``k`` kept per privacy unit and their text values
    stripped already, and ``bounding`` is None.  On a cluster ``source`` names the files and ``bounding`` is the
    bounding every pass over them applies (:class:`~synthdp.mechanisms.units.Bounding`).  ``stripped``: the
    columns whose text values lost surrounding spaces (read off the data: diagnostics, never released).
    """

    source: Any
    bounding: Any = None
    stripped: tuple[str, ...] = ()

    @property
    def frame(self) -> pd.DataFrame | None:
        """The rows held in memory, or None when the engine reads them where it counts."""
        return self.source if isinstance(self.source, pd.DataFrame) else None

    @property
    def n(self) -> int | None:
        """How many rows are held in memory (public under replace-one only, docs/privacy.md §1.3), or None on a
        cluster, where the tally pass first sees it."""
        return None if self.frame is None else len(self.frame)
