"""The native ``exact`` backend: exhaustive searches certifiable by exhaustion.

* :mod:`synthdp.oracles.exact.oracle` -- :class:`ExactSearchOracle`, the backend behind ``oracle="exact"``;
* :mod:`synthdp.oracles.exact.query` -- the query player: marginal tables, branch and bound over literals;
* :mod:`synthdp.oracles.exact.suffix` -- the row-class search for wide conjunctions (the evaluator);
* :mod:`synthdp.oracles.exact.transform` -- the Walsh-Hadamard transform for parities (the evaluator);
* :mod:`synthdp.oracles.exact.data` and :mod:`synthdp.oracles.exact.data_kernel` -- the data player's branch
  and bound (its compiled core);
* :mod:`synthdp.oracles.exact.common` -- the budget and outcome types the searches share.
"""

from synthdp.oracles.exact.oracle import ExactSearchOracle

__all__ = ["ExactSearchOracle"]
