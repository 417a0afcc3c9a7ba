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

from synthdp.core.options import user_stacklevel

__all__ = ["OwnerWarning", "owner_warning"]

log = logging.getLogger(__name__)


class OwnerWarning(UserWarning):
    """Advice read off the private data for the owner only: not differentially private, never released."""


def owner_warning(text: str, category: type[OwnerWarning] = OwnerWarning) -> None:
    """Warn the owner with ``text`` (read off the private data: never put it in a release), as a warning of
    ``category`` (:class:`OwnerWarning` or a kind of it)."""
    log.info("for the data owner only, not for release: %s", text)  # INFO: the warning shows it; once, not twice
    warnings.warn(f"{text} (for the data owner only: read off the private data, not part of the release)",
                  category, stacklevel=user_stacklevel())
