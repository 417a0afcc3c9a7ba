"""``synthdp bench accuracy``: error against privacy budget on the standard protocols.

Protocols (``../shared/benchmarks/README.md``):

* ``adult3`` / ``adult5`` — ADULT with the exact 64 random 3-way / 5-way
  marginal workloads, ``delta = 1/n^2``, mean over seeds; compared with FEM's
  published mean max error, read from that README at run time.
* ``nltcs`` / ``acs`` — all 3-way conjunctions (marginal cells) of the
  binary tables; the exponential mechanism over the whole class runs beside
  RSPM and PRSMA (sampled through its exact-oracle law, one oracle call per
  round: its ``K R`` calls are out of reach at these ``delta``) in the same
  game, so the price of oracle efficiency is a measured ratio.

Hyperparameters are fixed in :data:`SETTINGS` (chosen on NLTCS only, see
``docs/benchmarks.md``); the ADULT numbers are measured with them unchanged.
Writes ``results.json``, ``results.md`` and ``accuracy.png`` under ``--out``.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import re
import time
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

import synthdp
from synthdp import api
from synthdp.accounting.ledger import Ledger, as_epsilon
from synthdp.accounting.zcdp import ZcdpLedger, dp_epsilon, rho_for_dp
from synthdp.bench.figures import epsilon_panels, write_tables_and_figure
from synthdp.bench.options import add_out, add_quick, comma_list, quick
from synthdp.methods.game.settings import DEFAULT_NOISE, DEFAULT_RESOLUTION, DEFAULT_THETA
from synthdp.core.data import AggregatedData
from synthdp.core.encoding import Encoder
from synthdp.datasets import benchmarks_dir, load_coded, load_workload
from synthdp.evaluation.marginals import marginal_errors
from synthdp.files.csvfile import write_json
from synthdp.mechanisms.laplace import spent_epsilon
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.game.method import PRSMA_PLAYERS
from synthdp.methods.measure.algorithm import measure
from synthdp.queries.complement import ComplementClosed
from synthdp.queries.conjunctions import Conjunctions
from synthdp.queries.workload import Workload

log = logging.getLogger(__name__)

def _defaults() -> dict:

    return {"rounds": None, "epsilon_per_round": None, "samples_per_round": None,
            "ftpl_theta": DEFAULT_THETA, "resolution": DEFAULT_RESOLUTION, "respond_to": "auto",
            "burn_in": None, "ftpl_noise": DEFAULT_NOISE}


#: Game settings of every suite: the library defaults, fixed on NLTCS before any ADULT number was measured.
SETTINGS = _defaults()

SUITES = {
    "adult3": {"dataset": "adult", "workload": "adult_3way_64", "players": ["exponential"], "fem": "ADULT 3-way x64"},
    "adult5": {"dataset": "adult", "workload": "adult_5way_64", "players": ["exponential"], "fem": "ADULT 5-way x64"},
    "nltcs": {"dataset": "nltcs", "marginals": 3, "players": ["exponential", "rspm", "prsma-exact"]},
    "acs": {"dataset": "acs", "marginals": 3, "players": ["exponential", "rspm", "prsma-exact"]},
    # Tuning sets with categorical domains (2..22 values): not part of "all".  The x64 ones mirror
    # the ADULT protocol: 64 random k-way marginals drawn with numpy.random.RandomState(0).
    "br2000": {"dataset": "br2000", "marginals": 3, "players": ["exponential"], "tuning": True},
    "br2000-3x64": {"dataset": "br2000", "marginals": 3, "random": 64, "players": ["exponential"], "tuning": True},
    "br2000-5x64": {"dataset": "br2000", "marginals": 5, "random": 64, "players": ["exponential"], "tuning": True},
}


@dataclass
class Run:
    """One generation and its measured error."""

    suite: str
    player: str
    epsilon: float
    delta: float
    seed: int
    max_error: float
    mean_tv: float
    seconds: float
    rounds: int
    oracle_calls: int
    oracle_failures: int
    epsilon_spent: float
    conditional: bool
    response: str = ""


def published_fem(label: str) -> dict[float, float]:
    """FEM's published mean max error per epsilon, parsed from the shared benchmarks README."""

    text = (benchmarks_dir() / "README.md").read_text()
    header = next(line for line in text.splitlines() if line.startswith("| workload"))
    eps = [float(re.sub(r"[^0-9.]", "", c)) for c in header.strip("|").split("|")[1:]]
    row = next((line for line in text.splitlines() if line.startswith(f"| {label} |")), None)
    if row is None:
        return {}
    return dict(zip(eps, (float(c) for c in row.strip("|").split("|")[1:])))


def _suite_inputs(name: str):
    """The table, schema, query class and evaluation attribute sets of a suite."""
    spec = SUITES[name]
    df, schema = load_coded(spec["dataset"])
    if "workload" in spec:
        base = Workload.from_names(schema.domain, load_workload(spec["workload"]))
        sets = [tuple(a) for a in base.marginal_attrs]
    else:
        sets = list(itertools.combinations(range(len(schema.domain)), spec["marginals"]))
        if "random" in spec:
            pick = np.random.RandomState(0).choice(len(sets), spec["random"], replace=False)
            sets = [sets[i] for i in pick]
            base = Workload(schema.domain, sets)
        else:
            base = Conjunctions.marginals(schema.domain, spec["marginals"])
    return df, schema, ComplementClosed(base), sets


#: Rounds of the PRSMA players when ``--rounds`` is not given, and their neighbouring relation
#: (PRSMA runs under replace-one only; the other players under add/remove).  At ``delta = 1/n^2``
#: PRSMA's pieces hold ``n / K`` records, ``K`` growing with the rounds (NLTCS, eps 0.1: 15 rounds at
#: most); 10 was chosen on NLTCS among 1, 3, 10, 30 (docs/benchmarks.md).
PRSMA_SETTINGS = {"rounds": 10, "relation": "replace-one"}


#: The labels of the select-measure-estimate method in the player column: zCDP (``--method measure``) and pure
#: DP with Laplace measurements (``--method measure-pure``, docs/privacy.md §10.2; delta 0).
MEASURE, MEASURE_PURE = "measure", "measure-pure"


def run_measure(suite: str, epsilon: float, seed: int, *, pure: bool = False) -> Run:
    """One select-measure-estimate run (docs/privacy.md §8) on the suite's marginals, under add/remove.

    The whole ``(epsilon, delta)`` is converted to ``rho`` by the tighter
    conversion of §8.5; ``pure``: delta 0, the whole ``epsilon`` through a
    pure ledger (§10.2).  The method's settings are its public defaults.
    """
    df, schema, _, sets = _suite_inputs(suite)
    delta = 0.0 if pure else 1.0 / len(df) ** 2
    data = Encoder(schema).to_aggregated(df)
    start = time.perf_counter()
    if pure:
        budget = as_epsilon(epsilon)
        ledger = Ledger(budget, Fraction(0))
    else:
        budget = rho_for_dp(epsilon, delta)
        ledger = ZcdpLedger(budget)
    release = measure(data, sets, budget=budget, relation="add-remove", ledger=ledger, rng=PrivateRandom(seed),
                      progress=False, pure=pure)
    seconds = time.perf_counter() - start
    errors = marginal_errors(data, AggregatedData.from_codes(data.domain, release.records), sets)
    spent = float(spent_epsilon(ledger)) if pure else float(dp_epsilon(release.rho_spent, delta))
    return Run(suite, MEASURE_PURE if pure else MEASURE, epsilon, delta, seed, errors.max_error, errors.mean_tv,
               seconds, release.rounds, 0, 0, spent, False)


def run_one(suite: str, player: str, epsilon: float, seed: int, oracle: str, settings: dict) -> Run:
    """Generate once and measure max error and mean TV over the suite's marginals."""

    if player in (MEASURE, MEASURE_PURE):
        return run_measure(suite, epsilon, seed, pure=player == MEASURE_PURE)

    df, schema, qc, sets = _suite_inputs(suite)
    delta = 1.0 / len(df) ** 2
    if player in PRSMA_PLAYERS:
        settings = dict(settings, rounds=settings.get("rounds") or PRSMA_SETTINGS["rounds"],
                        relation=PRSMA_SETTINGS["relation"])
    start = time.perf_counter()
    res = synthdp.generate_synthetic(df, qc, epsilon=epsilon, delta=delta, schema=schema, random_state=seed,
                                     query_player=player, oracle=oracle, progress=False, **settings)
    seconds = time.perf_counter() - start
    enc = Encoder(schema)
    errors = marginal_errors(enc.to_aggregated(df), enc.to_aggregated(res.data), sets)
    calls = sum(s["calls"] for s in res.report.diagnostics.oracle_stats.values())
    fails = sum(s["failures"] for s in res.report.diagnostics.oracle_stats.values())
    return Run(suite, player, epsilon, delta, seed, errors.max_error, errors.mean_tv, seconds, res.report.rounds,
               calls, fails, res.report.epsilon_spent, res.report.conditional, res.report.respond_to)


def summarise(runs: list[Run]) -> list[dict]:
    """Worst, median and mean over seeds of the max error per (suite, player, epsilon).

    A user runs once and gets one seed, not the mean: the worst and the
    median seed say what a single run can be expected to give.
    """
    groups: dict[tuple, list[Run]] = {}
    for r in runs:
        groups.setdefault((r.suite, r.player, r.epsilon), []).append(r)
    rows = []
    for (suite, player, eps), rs in sorted(groups.items()):
        fem = published_fem(SUITES[suite]["fem"]).get(eps) if "fem" in SUITES[suite] else None
        errors = [r.max_error for r in rs]
        rows.append({"suite": suite, "player": player, "epsilon": eps, "seeds": len(rs),
                     "worst_max_error": float(np.max(errors)), "median_max_error": float(np.median(errors)),
                     "mean_max_error": float(np.mean(errors)),
                     "mean_tv": float(np.mean([r.mean_tv for r in rs])),
                     "max_seconds": float(max(r.seconds for r in rs)), "fem": fem,
                     "failures": int(sum(r.oracle_failures for r in rs))})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| suite | query player | epsilon | max error: worst seed | median | mean | FEM (published mean) "
             "| mean TV | max time (s) | seeds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fem = "" if r["fem"] is None else f"{r['fem']:.3f}"
        lines.append(f"| {r['suite']} | {r['player']} | {r['epsilon']:g} | {r['worst_max_error']:.4f} | "
                     f"{r['median_max_error']:.4f} | {r['mean_max_error']:.4f} | {fem} | {r['mean_tv']:.3f} | "
                     f"{r['max_seconds']:.1f} | {r['seeds']} |")
    for player, ratios in _price_of_oracle_efficiency(rows).items():
        lines.append("")
        lines.append(f"Price of oracle efficiency (mean max error of {player} / exponential mechanism, same budget): "
                     + ", ".join(f"{s} eps={e:g}: {v:.2f}" for (s, e), v in ratios.items()))
    return "\n".join(lines) + "\n"


def _price_of_oracle_efficiency(rows: list[dict]) -> dict[str, dict]:
    """Per oracle-based player, ``{(suite, epsilon): its error / the exponential mechanism's}``."""
    by = {(r["suite"], r["player"], r["epsilon"]): r["mean_max_error"] for r in rows}
    out: dict[str, dict] = {}

    for player in ("rspm", *PRSMA_PLAYERS):
        ratios = {(s, e): by[(s, player, e)] / by[(s, "exponential", e)]
                  for (s, p, e) in by if p == "exponential" and (s, player, e) in by and by[(s, p, e)] > 0}
        if ratios:
            out[player] = ratios
    return out


def plot(rows: list[dict], path: Path) -> None:

    suites = sorted({r["suite"] for r in rows})
    with epsilon_panels(len(suites), path, "max error (mean; dotted: worst seed)") as axes:
        for ax, suite in zip(axes, suites):
            for player in sorted({r["player"] for r in rows if r["suite"] == suite}):
                mine = sorted((r["epsilon"], r["mean_max_error"], r["worst_max_error"]) for r in rows
                              if r["suite"] == suite and r["player"] == player)
                eps, mean, worst = zip(*mine)
                line, = ax.plot(eps, mean, marker="o", label=f"synthdp {player}")
                ax.plot(eps, worst, ls=":", color=line.get_color())
            if "fem" in SUITES[suite]:
                fem = sorted(published_fem(SUITES[suite]["fem"]).items())
                if fem:
                    ax.plot(*zip(*fem), ls="--", color="k", label="FEM (published)")
            ax.set_title(suite)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="synthdp bench accuracy", description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="all", help="adult3, adult5, nltcs, acs, or all of these (comma list "
                   "allowed); br2000 (all 3-way marginals), br2000-3x64 and br2000-5x64 (64 random 3-/5-way "
                   "marginals) are the tuning sets for categorical domains")
    p.add_argument("--eps", default="0.1,0.15,0.2,0.25,0.5,1.0", help="comma list of total epsilons")
    p.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per setting (default: %(default)s)")
    p.add_argument("--methods", "--method", dest="methods", default="game",
                   help="comma list of game (the suite's query players), measure (select-measure-estimate, "
                        "docs/privacy.md §8) and measure-pure (the same under pure DP, delta 0, §10.2), e.g. "
                        "--methods game,measure (default: %(default)s)")
    p.add_argument("--query-player", default=None, help="override the suite's query players (comma list)")
    p.add_argument("--oracle", default="auto", help="oracle of the game's players (default: %(default)s)")
    p.add_argument("--rounds", type=int, default=None, help="game rounds (default: from the per-round budget)")
    p.add_argument("--epsilon-per-round", type=float, default=None,
                   help="per-round budget that fixes the rounds (default: the library's)")
    p.add_argument("--burn-in", type=float, default=None, help="default: the library's (depends on the response)")
    p.add_argument("--ftpl-noise", default=SETTINGS["ftpl_noise"], choices=["two-sided", "one-sided"],
                   help="the game's data-player perturbation (default: %(default)s)")
    p.add_argument("--samples-per-round", type=int, default=SETTINGS["samples_per_round"],
                   help="the game's samples per round (default: %(default)s)")
    p.add_argument("--ftpl-theta", type=float, default=SETTINGS["ftpl_theta"],
                   help="the game's FTPL scale factor (default: %(default)s)")
    p.add_argument("--respond-to", default="auto", choices=["auto", "round", "union"],
                   help="what the game's query player answers (default: %(default)s)")
    add_out(p, "results/accuracy")
    add_quick(p, "--suite nltcs --eps 1 --seeds 1 --rounds 20")
    return p


def run(argv: list[str] | None = None) -> dict:
    from tqdm.auto import tqdm


    args = quick(build_parser().parse_args(argv), suite="nltcs", eps="1.0", seeds=1, rounds=20)
    suites = ([s for s in SUITES if not SUITES[s].get("tuning")] if args.suite == "all"
              else comma_list(args.suite, "--suite", SUITES))
    eps_list = [float(e) for e in comma_list(args.eps, "--eps")]
    settings = dict(SETTINGS, rounds=args.rounds, epsilon_per_round=args.epsilon_per_round,
                    samples_per_round=args.samples_per_round, ftpl_theta=args.ftpl_theta, respond_to=args.respond_to,
                    burn_in=args.burn_in, ftpl_noise=args.ftpl_noise)
    methods = comma_list(args.methods, "--methods", ("game", MEASURE, MEASURE_PURE))

    def players(suite: str) -> list[str]:
        game = (args.query_player.split(",") if args.query_player else SUITES[suite]["players"])
        return (game if "game" in methods else []) + [m for m in (MEASURE, MEASURE_PURE) if m in methods]

    jobs = [(s, p, e, seed) for s in suites for p in players(s) for e in eps_list for seed in range(args.seeds)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    for suite, player, eps, seed in tqdm(jobs, desc="bench accuracy", unit="run"):
        runs.append(run_one(suite, player, eps, seed, args.oracle, settings))
        log.info("%s", runs[-1])
        # Written after every run, so an interrupted sweep keeps what it measured.
        write_json({"settings": settings, "runs": [asdict(r) for r in runs], "summary": summarise(runs)},
                   out / "results.json")
    rows = summarise(runs)
    write_tables_and_figure(out, markdown(rows), lambda path: plot(rows, path), "accuracy.png")
    return {"summary": rows}


def main() -> None:
    run()


if __name__ == "__main__":
    main()
