"""What a run was charged, as its messages say it (docs/privacy.md §10.1).

A refusal or an interrupt that comes after a private step leaves with what the
ledger was charged, so that the data owner counts a new run as a second spend.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Sequence

from synthdp.accounting.ledger import Ledger
from synthdp.core.errors import SynthDPError

__all__ = ["spend_text", "stating_spend"]


@contextmanager
def stating_spend(ledgers: Ledger | Sequence[Ledger]):
    """Re-raise an error that comes after a ledger was charged with what was spent (docs/privacy.md §10.1).

    Most refusals come before any private step (the plan is checked on public
    inputs and placeholder domains first; PrivTree's cells are capped so that they
    fit, :func:`synthdp.plan.cell_cap`; every column's values are checked while the
    table is tallied, §10.7, §10.8).  A few can only come after one: a
    model too large for the categories partition selection learned, a
    solver failure in Mode E.  Nothing is released then, but the data were
    used: the owner is told what the ledger was charged, so that a new run is
    counted as a second spend.

    ``ledgers``: one ledger, or the ledgers of the steps a run has finished so far, in order, read when the error
    comes (a linked run appends its parent view's ledger once that view has run, docs/privacy.md §12: a refusal in
    the joined view then states the choice of ``k`` and the parent view's charges too).

    An interrupt (SIGINT, SIGTERM, Ctrl-C) leaves with what the ledgers were
    charged so far, as the text :func:`spend_text` writes (``"nothing"``
    before the first private step), in its ``charged`` attribute, for the
    command line to say; with a run nested inside (a linked run's view), both what these ledgers were charged
    and what the nested one said.
    """
    try:
        yield
    except KeyboardInterrupt as interrupt:
        charged = _charged(ledgers, interrupt)
        own = ", then ".join(_spent_text(ledger) for ledger in charged) or "nothing"
        inner = getattr(interrupt, "charged", "nothing")  # a run nested in this one's (a linked view) said its own
        interrupt.charged = inner if own == "nothing" else own if inner == "nothing" else f"{own}, then {inner}"
        raise
    except SynthDPError as error:
        charged = _charged(ledgers, error)
        if not charged:
            raise
        stated = error.with_note(_after(charged, "refusal"))
        stated.stated = error.stated
        raise stated from error
    except Exception as error:  # a failure no refusal foresaw (a lost worker, a bug): the spend is still said
        charged = _charged(ledgers, error)
        if charged:
            error.add_note(_after(charged, "error"))
        raise


def _after(charged: Sequence[Ledger], what: str) -> str:
    """The sentence a refusal or an error after the private steps ``charged`` ends with."""
    return (f"This {what} came after private steps that ran on the data and were charged "
            f"{', then '.join(str(ledger.total()) for ledger in charged)}; nothing was released, but a new run on "
            "the same data spends again (docs/privacy.md §10.1).")


def _charged(ledgers: Ledger | Sequence[Ledger], error: BaseException) -> list[Ledger]:
    """The ledgers among ``ledgers`` that were charged (in order) and that a run nested in this one has not
    stated already (each ledger is stated once); ``error.stated`` becomes what has been stated, these included."""
    known = getattr(error, "stated", ())
    charged = [ledger for ledger in ([ledgers] if isinstance(ledgers, Ledger) else ledgers)
               if ledger.events and not any(ledger is seen for seen in known)]
    error.stated = (*charged, *known)
    return charged


def _spent_text(ledger: Ledger) -> str:
    """What ``ledger`` was charged, as :func:`spend_text` writes it (no delta under pure DP)."""
    spent = ledger.total()
    return spend_text(float(spent.epsilon), None if ledger.delta_budget == 0 else float(spent.delta))


def spend_text(epsilon: float, delta: float | None) -> str:
    """A spend as the messages give it: ``epsilon=0.5, delta=1e-09`` (``delta`` None: pure DP, none shown)."""
    return f"epsilon={epsilon:.6g}" + ("" if delta is None else f", delta={delta:.3g}")
