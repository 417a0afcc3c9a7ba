"""Messages for the data owner's eyes only (docs/privacy.md §10.8).

Some advice can only be given by reading the private table outside the
privacy guarantee: how many rows bounding dropped, that a column has a few
rows too few for what was asked of it.  Such a message goes to the person
running synthdp (a Python warning of category :class:`OwnerWarning`, and an
INFO line of the log, so that a program that has not set up logging shows it
once), never into the release: the report's ``warnings`` never hold one, and
no choice of the run depends on one.
"""

from __future__ import annotations

import logging
import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from synthdp.core.options import user_stacklevel

__all__ = ["OwnerWarning", "owner_warning", "said_again"]

log = logging.getLogger(__name__)

#: True while a step repeats checks whose warnings the run gives elsewhere (:func:`said_again`).
_REPEATED: ContextVar[bool] = ContextVar("owner_warnings_repeated", default=False)


class OwnerWarning(UserWarning):
    """Advice read off the private data for the owner only: not differentially private, never released."""


def owner_warning(text: str, category: type[OwnerWarning] = OwnerWarning) -> None:
    """Warn the owner with ``text`` (read off the private data: never put it in a release), as a warning of
    ``category`` (:class:`OwnerWarning` or a kind of it).  Nothing inside :func:`said_again`."""
    if _REPEATED.get():
        return
    log.info("for the data owner only, not for release: %s", text)  # INFO: the warning shows it; once, not twice
    warnings.warn(f"{text} (for the data owner only: read off the private data, not part of the release)",
                  category, stacklevel=user_stacklevel())


@contextmanager
def said_again() -> Iterator[None]:
    """Inside, :func:`owner_warning` says nothing: for a step that repeats, on the same rows, checks whose owner's
    warnings the run gives once elsewhere (a linked run planning both views at every candidate ``k``)."""
    token = _REPEATED.set(True)
    try:
        yield
    finally:
        _REPEATED.reset(token)
