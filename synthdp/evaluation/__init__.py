"""What the library evaluates: the data owner's non-private checks of a synthetic table against the real one.

:mod:`~synthdp.evaluation.marginals` (every marginal's largest cell error and total-variation distance) and
:mod:`~synthdp.evaluation.worst_case` (the certified maximum error over a whole query class).  Neither
releases anything: both read the real table freely.
"""

from synthdp.evaluation.marginals import ErrorReport, marginal_errors
from synthdp.evaluation.worst_case import WorstCase, worst_case_error

__all__ = ["ErrorReport", "WorstCase", "marginal_errors", "worst_case_error"]
