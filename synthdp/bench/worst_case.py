"""Old path of ``synthdp bench evaluator`` (:mod:`synthdp.bench.certification`): kept until issue 29's second part
(``synthdp.cli``'s ``BENCHES`` still names it)."""

from synthdp.bench.certification import build_parser, run

__all__ = ["build_parser", "run"]
