"""The rows a run reads, as its counting engine prepared them, and how its readers parse them (docs/privacy.md
§10.6, §10.7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from synthdp.files.sources import ReadOptions

if TYPE_CHECKING:
    from synthdp.config import SynthesisConfig

__all__ = ["Rows", "read_options"]


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


def read_options(config: SynthesisConfig) -> ReadOptions:
    """How the readers of a run parse a table: the missing tokens, and the privacy unit's column kept as text even
    when a CSV reader infers types (``007`` and ``7`` are two units); the readers of a run read every field as text
    anyway (docs/privacy.md §10.1)."""
    return ReadOptions(missing=tuple(config.missing or ()), text=() if config.privacy_unit is None else
                       (config.privacy_unit,))
