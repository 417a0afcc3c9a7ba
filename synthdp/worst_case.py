"""Old path of :mod:`synthdp.evaluation.worst_case`: kept until issue 29's second part (``synthdp.cli`` still
imports it here)."""

from synthdp.evaluation.worst_case import worst_case_error

__all__ = ["worst_case_error"]
