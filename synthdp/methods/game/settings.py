"""The synthetic-data game's settings (docs/privacy.md §4): the one declaration of the options only the game reads.

Each field is an option of :func:`synthdp.generate_synthetic`,
:class:`synthdp.Synthesizer` and ``synthdp generate`` (group ``game``):
:class:`synthdp.config.SynthesisConfig` takes them from here, and setting one
to other than its default makes ``method="auto"`` choose the game.  The
documentation may name a tuned default as ``$NAME``
(:data:`synthdp.methods.game.defaults.PLAN_DEFAULTS`).

No numpy here: the command line builds its flags from these fields without loading the library.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from synthdp.core.options import option

#: Tuned defaults that are not ``None`` (docs/benchmarks.md; privacy does not depend on them).
DEFAULT_THETA = 0.3
DEFAULT_RESOLUTION = 100
DEFAULT_NOISE = "one-sided"


@dataclass(frozen=True, kw_only=True)
class GameSettings:
    """The options only the game reads, in the order the plan names them (each checked by its rule,
    :data:`synthdp.core.parameters.RULES`, when the run's configuration is built)."""

    rounds: int | None = option(None, group="game", doc="""
        Game rounds T. None: the most rounds whose per-round budget stays at least epsilon_per_round, at most
        $DEFAULT_MAX_ROUNDS.""")
    epsilon_per_round: float | None = option(None, group="game", doc="""
        The per-round budget that fixes the number of rounds when rounds is None (None: the planner's default,
        $DEFAULT_EPSILON_PER_ROUND for most classes). Give rounds or epsilon_per_round, not both.""")
    burn_in: float | None = option(None, group="game", doc="""
        Fraction of first rounds whose samples are not released. None: $ROUND_BURN_IN when the query player
        answers the round, 0 when it answers the union (which corrects the early plays itself).""")
    query_player: str = option("auto", group="game", doc="""
        The private query player: 'rspm', 'prsma', 'prsma-exact' (PRSMA's law under an oracle that cannot fail,
        one call per round: for accuracy studies), 'exponential', 'noisy-max', or 'auto' (chosen from the class
        and the budget).""")
    oracle: str = option("auto", group="game", doc="""
        Solver of the players' optimisation problems: 'auto', 'exact', 'cpsat', 'cbc', 'maxsat' or 'brute'.
        select-measure-estimate reads it too for a class it selects from with RSPM.""")
    samples_per_round: int | None = option(None, group="game", doc="""
        Records N the data player plays each round. None: $DEFAULT_SAMPLES, or $CAPPED_SAMPLES when the rounds
        are capped at $DEFAULT_MAX_ROUNDS.""")
    time_limit: float | None = option(None, group="game", doc="""
        Seconds per oracle call. Switches RSPM to Mode N, whose privacy is conditional on no solver failure: for
        experiments only (select-measure-estimate reads it too for a class it selects from with RSPM).""")
    resolution: int = option(DEFAULT_RESOLUTION, group="game", doc="""
        Grid of the data player's perturbations: its noise is a multiple of 1/resolution.""")
    ftpl_theta: float = option(DEFAULT_THETA, group="game", doc="""
        Scale factor of the data player's follow-the-perturbed-leader noise (tuned; docs/benchmarks.md).""")
    ftpl_noise: str = option(DEFAULT_NOISE, group="game", doc="""
        The data player's perturbation: 'two-sided' discrete Laplace (docs/privacy.md §4.3, the accuracy
        theorem's) or FEM-style 'one-sided' penalties.""")
    respond_to: str = option("auto", group="game", doc="""
        What the query player answers: 'round' (this round's samples, the game of docs/privacy.md §4.1) or
        'union' (the union of all samples so far, §4.5 variant: same privacy, no accuracy theorem). 'auto': the
        union once each round's budget is at least $UNION_FROM_EPSILON_PER_ROUND.""")
    prsma_max_calls: int = option(100_000, group="game", doc="""
        Most oracle calls PRSMA may make in one round.""")
    work_limit: float | None = option(None, group="game", doc="""
        Work limit of each PRSMA oracle call (deterministic solver work units; None: the oracle's default).""")
    data_work_limit: float | None = option(None, group="game", doc="""
        Work limit of each data-player oracle call (deterministic solver work units; None: the oracle's
        default).""")
    insist: bool = option(False, group="game", doc="""
        PRSMA: keep calling the oracle after a failure, up to prsma_max_calls, instead of stopping.""")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The game's option names, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(GameSettings))
