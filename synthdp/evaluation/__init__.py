"""What the library evaluates: the data owner's non-private checks of a synthetic table against the real one.

:mod:`~synthdp.evaluation.marginals` (every marginal's largest cell error and total-variation distance) and
:mod:`~synthdp.evaluation.worst_case` (the certified maximum error over a whole query class).  Neither
releases anything: both read the real table freely.

The names below are imported on first use (PEP 562), as the package's own are: the column metrics of
:mod:`~synthdp.evaluation.similarity`, which the run's comparison for the data owner reads
(:mod:`synthdp.owner_check`), load without the worst case, which sits above the driver.
"""

from typing import TYPE_CHECKING

from synthdp.core.lazy import lazy_names

#: Where each public name lives; :func:`__getattr__` imports it on first use.
_PUBLIC = {
    "ErrorReport": "synthdp.evaluation.marginals",
    "WorstCase": "synthdp.evaluation.worst_case",
    "marginal_errors": "synthdp.evaluation.marginals",
    "worst_case_error": "synthdp.evaluation.worst_case",
}

__all__ = sorted(_PUBLIC)

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from synthdp.evaluation.marginals import ErrorReport, marginal_errors
    from synthdp.evaluation.worst_case import WorstCase, worst_case_error


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)
