"""Which solver answers a method's optimisation problems, and what each privacy mode of its answers means.

Both methods search a class too large to enumerate with an oracle: the
game's query and data players, select-measure-estimate's RSPM rounds
(docs/privacy.md §8.1 (b)).  The choice reads only the public class and
domain, so it costs nothing.
"""

from __future__ import annotations

from synthdp.core.errors import InputError
from synthdp.oracles import get_oracle
from synthdp.oracles.base import Oracle
from synthdp.oracles.brute import universe_size
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import base_class

#: Record universes up to this size are enumerated by the data player.
SMALL_UNIVERSE = 2**17

#: What each mode means, for the report.
MODE_MEANINGS = {
    "E": "exact: every query-oracle answer is a certified optimum; a solver FAIL abandons the release",
    "N": "time-limited: privacy conditional on no solver failure (experiments only, do not publish)",
    "P": "PRSMA: solver failures are hidden by the mechanism",
    "P, exact-oracle law": "PRSMA's output law under an oracle that never fails (one call per round)",
    "-": "no query oracle: the player scores every query of the explicit workload",
}


def choose_oracle(name: str, query_class: QueryClass, role: str) -> tuple[Oracle, str]:
    """``auto``: the native exact search where it applies, else CP-SAT; with the reason.

    The data player on a small record universe (at most ``SMALL_UNIVERSE``
    records, e.g. NLTCS) enumerates it instead: exact and fastest there.
    Only the public domain is read.
    """
    base = base_class(query_class)
    if name == "auto" and role == "data player" and universe_size(base) <= SMALL_UNIVERSE:
        return get_oracle("brute"), f"record universe of at most {SMALL_UNIVERSE} records: enumerated"
    if name == "auto":
        exact = get_oracle("exact")
        if exact.supports(base):
            return exact, "the native exact search supports this class"
        return get_oracle("cpsat"), "the native exact search does not support this class: CP-SAT"
    oracle = get_oracle(name)
    if not oracle.supports(base):
        raise InputError(f"oracle {name!r} cannot encode the class {base.name} for the {role}; "
                         f"use --oracle auto or one of cpsat, cbc")
    return oracle, "chosen by the caller"
