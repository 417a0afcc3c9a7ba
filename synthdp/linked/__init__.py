"""Two linked tables -- a parent table and a child table with a foreign key -- released together under one
privacy unit, the parent key (docs/privacy.md §12).

:mod:`~synthdp.linked.links` reads the link and refuses bad input before anything private runs;
:mod:`~synthdp.linked.bounding` bounds each family; :mod:`~synthdp.linked.views` makes the parent view and
the joined view; :mod:`~synthdp.linked.fitting` releases both views as one release; and
:mod:`~synthdp.linked.generation` draws the pair of tables from the released models (post-processing).
"""

from synthdp.linked.fitting import LinkedReport, LinkedResult, synthesize_linked
from synthdp.linked.generation import LinkedModel
from synthdp.linked.links import Link

__all__ = ["Link", "LinkedModel", "LinkedReport", "LinkedResult", "synthesize_linked"]
