"""``synthdp bench classes``: certified worst-case error over query classes too large to list.

For each coded dataset, budget, seed and method, one synthetic table is
generated and compared with the real table by :func:`synthdp.worst_case_error`
(the data owner's non-private check: the certified maximum of
``|q(real) - q(synthetic)|`` over the whole class, or bounds on it when it
cannot be certified within ``--time-limit``).  Methods (``--methods``):

* ``game`` -- the synthetic-data game on the evaluated class (RSPM query player);
* ``exp-3way`` -- the game on the enumerated 3-way marginals (exponential query
  player): the release of ``--queries marginals:3``;
* ``measure-3way`` -- select-measure-estimate driven only by the enumerated
  3-way marginals;
* ``measure`` -- select-measure-estimate on the evaluated class (oracle-selected
  measurements);
* ``auto`` -- ``method="auto"`` on the evaluated class (the plan's choice and
  reason are recorded).

The 3-way tables do not depend on the evaluated class: each is generated once
per (dataset, epsilon, seed) and evaluated on every class.  A method the
installed version cannot run on a class is recorded as not available.
Writes ``results.json`` (after every run; ``--resume`` skips the runs already
there), ``results.md`` and ``classes.png`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np

import synthdp
from synthdp.bench.figures import epsilon_panels, write_tables_and_figure
from synthdp.bench.options import add_out, add_quick, comma_list, quick
from synthdp.core.errors import InputError
from synthdp.files.csvfile import write_json
from synthdp.datasets import CODED_DATASETS, load_coded
from synthdp.evaluation.worst_case import worst_case_error

log = logging.getLogger(__name__)

#: The evaluated classes of each dataset when ``--classes`` is not given.
DEFAULT_CLASSES = {"nltcs": ["conjunctions", "parities:3", "halfspaces:1"], "acs": ["conjunctions"]}

#: Each method's generation: the query spec (``None``: the evaluated class) and ``generate_synthetic``'s method.
METHODS = {"game": (None, "game"), "exp-3way": ("marginals:3", "game"), "measure-3way": ("marginals:3", "measure"),
           "measure": (None, "measure"), "auto": (None, "auto")}

#: Reference figures of the game before select-measure-estimate served these classes (NLTCS, all conjunctions,
#: eps 1, seed 0): the game with the RSPM player, and the release of ``marginals:3`` with the exponential player,
#: both evaluated over all 3^16 conjunctions; shown beside each table and plot of that configuration.
REFERENCE = {("nltcs", "conjunctions", 1.0): {"game": 0.583, "exp-3way": 0.079}}

#: The targets: the measure method's error over the game's at most this ratio, and below the 3-way baselines.
TARGET_GAME_RATIO = 1 / 3


def run_key(r: dict) -> tuple:
    """What identifies a run (for ``--resume``)."""
    return r["dataset"], float(r["epsilon"]), int(r["seed"]), r["method"], r["class"]


def load_inputs(name: str, rows: int | None, dims: int | None):
    """The coded table and its schema, cut to its first ``rows`` rows and ``dims`` columns (a public rule)."""
    df, schema = load_coded(name)
    if dims is not None:
        cols = list(df.columns[:dims])
        df = df[cols]
        schema = type(schema)(tuple(schema[c] for c in cols), schema.missing_values)
    if rows is not None:
        df = df.iloc[:rows].reset_index(drop=True)
    return df, schema


def generate(df, schema, query: str, method: str, epsilon: float, delta: float, seed: int):
    """One synthetic table, its generation seconds, the plan's method, reason and game player; or the error's text."""
    start = time.perf_counter()
    try:
        result = synthdp.generate_synthetic(df, query, epsilon=epsilon, delta=delta, schema=schema,
                                            random_state=seed, progress=False, method=method)
    except InputError as exc:
        return None, {"status": f"not available: {exc}", "gen_s": time.perf_counter() - start}
    plan = result.plan
    game = plan.method_plan if plan is not None and plan.method.name == "game" else None
    return result.data, {"status": "ok", "gen_s": time.perf_counter() - start,
                         "choice": None if plan is None else plan.method.name,
                         "reason": None if plan is None else plan.method_reason,
                         "player": None if game is None else str(game.player.value),
                         "epsilon_spent": result.report.epsilon_spent}


def evaluate(df, syn, schema, query_class: str, time_limit: float) -> dict:
    """The worst-case error of ``syn`` over ``query_class``: the certified value, or bounds."""
    wc = worst_case_error(df, syn, query_class, schema=schema, time_limit=time_limit)
    return {"value": wc.error, "certified": wc.certified, "lower": wc.lower, "upper": wc.upper,
            "eval_s": wc.seconds, "worst_query": wc.text, "backend": wc.backend, "eval_message": wc.message}


def summarise(runs: list[dict]) -> list[dict]:
    """Per (dataset, class, method, epsilon): means over seeds of the lower and upper bounds (equal if certified)."""
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["dataset"], r["class"], r["method"], float(r["epsilon"])), []).append(r)
    rows = []
    for (dataset, cls, method, eps), rs in sorted(groups.items()):
        ok = [r for r in rs if r["status"] == "ok"]
        row = {"dataset": dataset, "class": cls, "method": method, "epsilon": eps, "seeds": len(ok),
               "status": "ok" if ok else rs[-1]["status"]}
        if ok:
            row.update(lower=float(np.mean([r["lower"] for r in ok])), upper=float(np.mean([r["upper"] for r in ok])),
                       certified=all(r["certified"] for r in ok),
                       gen_s=float(np.mean([r["gen_s"] for r in ok])), eval_s=float(np.mean([r["eval_s"] for r in ok])),
                       choice=sorted({"/".join(str(r[k]) for k in ("choice", "player") if r.get(k)) for r in ok}))
        rows.append(row)
    return rows


def cell(row: dict | None) -> str:
    """A table cell: the certified mean, or its bounds marked with >= and <=."""
    if row is None:
        return ""
    if row["status"] != "ok":
        return "n/a"
    if row["certified"]:
        return f"{row['upper']:.3f}"
    return f"≥{row['lower']:.3f} ≤{row['upper']:.3f}"


def ratio(num: dict | None, den: dict | None) -> tuple[float, float] | None:
    """Bounds on ``num / den`` from the bounds of both means (``None`` when either is missing)."""
    if not num or not den or num["status"] != "ok" or den["status"] != "ok" or den["upper"] <= 0:
        return None
    return num["lower"] / den["upper"], (num["upper"] / den["lower"] if den["lower"] > 0 else float("inf"))


def _ratio_text(r: tuple[float, float] | None) -> str:
    if r is None:
        return ""
    return f"{r[1]:.2f}" if abs(r[0] - r[1]) < 5e-4 else f"{r[0]:.2f}..{r[1]:.2f}"


def tables(rows: list[dict]) -> str:
    """One markdown table per (dataset, class): epsilon by method, the target ratios and the reference figures."""
    out = []
    for dataset, cls in sorted({(r["dataset"], r["class"]) for r in rows}):
        mine = {(r["method"], r["epsilon"]): r for r in rows if r["dataset"] == dataset and r["class"] == cls}
        methods = [m for m in METHODS if any(k[0] == m for k in mine)]
        eps_list = sorted({k[1] for k in mine})
        refs = any((dataset, cls, e) in REFERENCE for e in eps_list)
        head = ["epsilon", *methods, "measure/game (≤0.33)", "measure/measure-3way (<1)", "measure/exp-3way (<1)"]
        if refs:
            head += ["game (reference)", "exp-3way (reference)"]
        seeds = sorted({r["seeds"] for r in mine.values() if r["status"] == "ok"})
        out += [f"### {dataset}, {cls} (mean over seeds: {'/'.join(map(str, seeds)) or '0'}; "
                f"certified max |q(real) - q(syn)|, ≥/≤ bounds where not certified)", "",
                "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for e in eps_list:
            measure = mine.get(("measure", e))
            cells = [f"{e:g}", *(cell(mine.get((m, e))) for m in methods),
                     _ratio_text(ratio(measure, mine.get(("game", e)))),
                     _ratio_text(ratio(measure, mine.get(("measure-3way", e)))),
                     _ratio_text(ratio(measure, mine.get(("exp-3way", e))))]
            if refs:
                ref = REFERENCE.get((dataset, cls, e), {})
                cells += [f"{ref[m]:.3f}" if m in ref else "" for m in ("game", "exp-3way")]
            out.append("| " + " | ".join(cells) + " |")
        unavailable = sorted({r["status"] for r in mine.values() if r["status"] != "ok"})
        out += [""] + [f"- {s}" for s in unavailable] + ([""] if unavailable else [])
        times = ", ".join(f"{m} {np.mean([r['gen_s'] for r in mine.values() if r['method'] == m and 'gen_s' in r]):.0f}"
                          f"+{np.mean([r['eval_s'] for r in mine.values() if r['method'] == m and 'eval_s' in r]):.0f}"
                          for m in methods if any(r["method"] == m and "gen_s" in r for r in mine.values()))
        if times:
            out += [f"Mean seconds per run (generation + evaluation): {times}", ""]
        chosen = {m: sorted({c for r in mine.values() if r["method"] == m for c in r.get("choice", [])})
                  for m in methods}
        out += ["Method run (plan's method/game player): "
                + ", ".join(f"{m}: {' or '.join(c)}" for m, c in chosen.items() if c), ""]
    return "\n".join(out) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    """Error against epsilon, one line per method, one panel per (dataset, class); bounds as bars."""
    panels = sorted({(r["dataset"], r["class"]) for r in rows if r["status"] == "ok"})
    if not panels:
        return
    with epsilon_panels(len(panels), path, "max |q(real) - q(syn)| over the class") as axes:
        for ax, (dataset, cls) in zip(axes, panels):
            mine = [r for r in rows if r["dataset"] == dataset and r["class"] == cls and r["status"] == "ok"]
            for method in [m for m in METHODS if any(r["method"] == m for r in mine)]:
                runs = [r for r in mine if r["method"] == method]
                eps = np.array(sorted({r["epsilon"] for r in runs}))  # one point per epsilon: the mean over seeds
                lo, hi = (np.array([np.mean([r[key] for r in runs if r["epsilon"] == e]) for e in eps])
                          for key in ("lower", "upper"))
                if np.array_equal(lo, hi):
                    ax.plot(eps, hi, marker="o", label=method)
                else:  # the upper bounds joined, a bar down to each lower bound
                    ax.errorbar(eps, hi, yerr=[hi - lo, np.zeros_like(hi)], marker="o", ls="--", capsize=3,
                                label=f"{method} (bounds)")
            for e in sorted({r["epsilon"] for r in mine}):
                for method, value in REFERENCE.get((dataset, cls, e), {}).items():
                    ax.plot([e], [value], marker="x", color="k", ls="none")
                    ax.annotate(f"{method} (reference)", (e, value), fontsize=6)
            ax.set_title(f"{dataset}: {cls}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="synthdp bench classes", description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="nltcs", help="comma list of coded datasets (default: %(default)s)")
    p.add_argument("--eps", default="1", help="comma list of total epsilons (default: %(default)s)")
    p.add_argument("--delta", type=float, default=1e-9, help="delta of every release (default: %(default)s)")
    p.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1 (default: %(default)s)")
    p.add_argument("--methods", "--method", dest="methods", default="measure-3way,measure",
                   help=f"comma list of {', '.join(METHODS)} (default: %(default)s; the game on halfspaces takes "
                        "hours)")
    p.add_argument("--classes", default=None,
                   help="comma list of evaluated class specs for every dataset (default per dataset: "
                        + "; ".join(f"{k}: {','.join(v)}" for k, v in DEFAULT_CLASSES.items()) + ")")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per evaluation (default: %(default)s)")
    p.add_argument("--rows", type=int, default=None, help="keep the first N rows only (quick checks and tests)")
    p.add_argument("--dims", type=int, default=None, help="keep the first D columns only (quick checks and tests)")
    p.add_argument("--resume", action="store_true", help="keep the runs already in <out>/results.json and skip them")
    add_out(p, "results/classes")
    add_quick(p, "--suite nltcs --eps 1 --seeds 1 --methods measure --classes conjunctions --rows 2000 --dims 8")
    return p


def run(argv: list[str] | None = None) -> dict:
    args = quick(build_parser().parse_args(argv), suite="nltcs", eps="1", seeds=1, methods="measure",
                 classes="conjunctions", rows=2000, dims=8)
    methods = comma_list(args.methods, "--methods", METHODS)
    suites = comma_list(args.suite, "--suite", CODED_DATASETS)
    eps_list = [float(e) for e in comma_list(args.eps, "--eps")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    settings = {"delta": args.delta, "time_limit": args.time_limit, "rows": args.rows, "dims": args.dims}
    runs: list[dict] = []
    if args.resume and path.exists():
        saved = json.loads(path.read_text())
        if saved["settings"] != settings:
            raise InputError(f"--resume: {path} was written with {saved['settings']}, not {settings}; drop "
                             "--resume or give the same settings")
        runs = [r for r in saved["runs"] if r["status"] == "ok"]  # unavailable runs are tried again
    done = {run_key(r) for r in runs}

    def record(entry: dict) -> None:
        runs.append(entry)
        result = cell(entry) if entry["status"] == "ok" else entry["status"]
        print(f"{entry['dataset']} eps={entry['epsilon']:g} seed={entry['seed']} {entry['method']:12s} "
              f"{entry['class']:14s} {result}  gen {entry['gen_s']:.1f}s"
              + (f" eval {entry['eval_s']:.1f}s" if "eval_s" in entry else ""), flush=True)
        write_json({"settings": settings, "runs": runs, "summary": summarise(runs)}, path)

    for dataset in suites:
        classes = args.classes.split(",") if args.classes else DEFAULT_CLASSES.get(dataset, ["conjunctions"])
        df, schema = load_inputs(dataset, args.rows, args.dims)
        for eps in eps_list:
            for seed in range(args.seeds):
                for method in methods:
                    spec, name = METHODS[method]
                    todo = [c for c in classes if (dataset, eps, seed, method, c) not in done]
                    # A table of a fixed query spec serves every class: generated once.
                    for group in ([todo] if spec and todo else [[c] for c in todo]):
                        base = {"dataset": dataset, "rows": len(df), "dims": df.shape[1], "epsilon": eps,
                                "delta": args.delta, "seed": seed, "method": method, "query": spec or group[0]}
                        syn, gen = generate(df, schema, spec or group[0], name, eps, args.delta, seed)
                        for cls in group:
                            entry = dict(base, **gen, **{"class": cls})
                            if syn is not None:
                                entry.update(evaluate(df, syn, schema, cls, args.time_limit))
                            record(entry)
    rows = summarise(runs)
    write_tables_and_figure(out, tables(rows), lambda path: plot(rows, path), "classes.png")
    return {"runs": runs, "summary": rows}


def main(argv: list[str] | None = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
