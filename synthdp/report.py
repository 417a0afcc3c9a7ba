"""The report that comes with every release: what was spent, how, and what to expect.

Budget figures are taken from the ledger, which the mechanisms fill as they
spend; nothing here recomputes a privacy cost.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Report:
    """Everything a data owner needs to publish (or not) a synthetic table."""

    epsilon_budget: float
    delta_budget: float
    epsilon_spent: float
    delta_spent: float
    composition: str
    relation: str
    query_class: str
    query_player: str
    query_player_reason: str
    oracle: str
    data_oracle: str
    mode: str
    conditional: bool
    rounds: int
    samples_per_round: int
    resolution: int
    ftpl_scale: float
    respond_to: str
    burn_in_rounds: int
    ftpl_noise: str
    epsilon_per_round: str
    rows_written: int
    seconds: float
    seeded: bool
    ledger: list[dict[str, Any]] = field(default_factory=list)
    oracle_stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    selected_queries: list[str] = field(default_factory=list)
    accuracy_bound: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """A few lines for the terminal."""
        lines = [
            f"privacy: spent epsilon={self.epsilon_spent:.6g}, delta={self.delta_spent:.3g} "
            f"of budget epsilon={self.epsilon_budget:.6g}, delta={self.delta_budget:.3g} "
            f"({self.composition}, {self.relation} neighbours)",
            f"game: {self.rounds} rounds x {self.samples_per_round} samples (first {self.burn_in_rounds} rounds not "
            f"released), query player {self.query_player} ({self.query_player_reason}), oracle {self.oracle}, "
            f"mode {self.mode}, responds to {self.respond_to}",
        ]
        for name, st in self.oracle_stats.items():
            lines.append(f"  oracle {name}: {st['calls']} calls, {st['failures']} failed/unproven, "
                         f"{st['total_time']:.2f} s total, {st['max_time']:.3f} s max")
        if self.conditional:
            lines.append("WARNING: privacy conditional on no solver failure (Mode N): do not publish")
        if "A" in self.accuracy_bound:
            b = self.accuracy_bound
            lines.append(f"a-priori bound: E[max error] <= {b['A']:.4g}/n + {b['B']:.4g} (worst case)")
        lines.append(f"wrote {self.rows_written} rows in {self.seconds:.1f} s")
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)
