"""The synthetic-data game's tuned defaults: public constants, named by the options' documentation.

They live apart from :mod:`synthdp.methods.game.method` so that the
documentation of the options (``$NAME`` in :mod:`synthdp.config`, filled in
from :data:`PLAN_DEFAULTS`) and the command line's ``--help`` need no numpy.
"""

#: Game defaults, tuned on NLTCS and BR2000 only (docs/benchmarks.md#game-defaults); privacy does not depend on them.
#: Without ``rounds``, the game plays as many rounds as keep each round's budget at least
#: ``DEFAULT_EPSILON_PER_ROUND`` (at most ``DEFAULT_MAX_ROUNDS``, a running-time cap).
DEFAULT_EPSILON_PER_ROUND = 0.0025
#: ... except for workloads of conjunctions at least this wide (5-way marginals), whose error sits in
#: few of very many small cells: there each selection must be sharper (tuned on BR2000 5-way).
WIDE_WIDTH = 5
WIDE_EPSILON_PER_ROUND = 0.01
DEFAULT_MAX_ROUNDS = 300
DEFAULT_SAMPLES = 50
#: ``samples_per_round=None`` when the cap cuts the rounds: each selection is then sharper than the
#: floor, and the plays' sampling error (about ``1/sqrt(N)`` per cell) is what blurs the query
#: player's view, so the running time the cap saves goes to samples (tuned on NLTCS and BR2000).
CAPPED_SAMPLES = 100
#: ``respond_to="auto"``: the union response once each round's budget is at least this (sharp
#: selections), else the round response; ``burn_in=None``: ``ROUND_BURN_IN`` for the round response
#: and none for the union response (which corrects the early plays itself).
UNION_FROM_EPSILON_PER_ROUND = 0.006
ROUND_BURN_IN = 0.25

#: Every default above by name: what :func:`synthdp.config.option_doc` fills ``$NAME`` in from.
PLAN_DEFAULTS = {name: value for name, value in dict(globals()).items()
                 if name.isupper() and isinstance(value, (int, float, str))}
