"""Old path of ``synthdp bench evaluation`` (:mod:`synthdp.bench.answering`): kept until issue 29's second part
(``synthdp.cli``'s ``BENCHES`` still names it)."""

from synthdp.bench.answering import build_parser, run

__all__ = ["build_parser", "run"]
