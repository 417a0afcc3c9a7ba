"""``synthdp generate --tune FILE.json`` and ``--target-error ALPHA --max-epsilon E`` (docs/privacy.md §5).

The ``generate`` command hands over to :func:`generate` when either option is
given (they are declared with the parser: :func:`synthdp.cli.parser.add_tuning_arguments`).
``--tune`` reads a JSON list of configurations (objects of
``generate_synthetic`` keywords) and releases the best one by random stopping
within ``--epsilon``/``--delta`` (§5.1); ``--target-error`` runs
accuracy-first (§5.3) from ``--epsilon`` (the first level's budget) up to
``--max-epsilon``.  Both need ``--n-rows`` (the common output size) and score
tables on ``--eval-workload`` (default: the ``--queries`` class).  Generator
options given on the command line are common to every run.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Callable

from synthdp.core.errors import InputError
from synthdp.files import csvfile
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.files.parquet import dump_table
from synthdp.tuning import accuracy_first, tune
from synthdp.tuning.runs import FIXED_KEYS

if TYPE_CHECKING:
    import pandas as pd


def requested(args: argparse.Namespace) -> bool:
    """Whether the command asks for tuning or accuracy-first."""
    return bool(getattr(args, "tune", None)) or getattr(args, "target_error", None) is not None


def read_candidates(path: str) -> list[dict]:
    """The configurations of a ``--tune`` file: a non-empty JSON list of objects."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read --tune {path!r}: {exc}") from None
    if not isinstance(data, list) or not data or not all(isinstance(c, dict) for c in data):
        raise InputError(f"--tune {path!r} must hold a non-empty JSON list of objects (one per configuration), "
                         f"got {type(data).__name__}")
    return data


def generate(args: argparse.Namespace, options: dict, read: Callable[[], pd.DataFrame]) -> int:
    """Run tuning or accuracy-first for ``synthdp generate`` and write its outputs as one unit.

    ``options`` are the command's options by name; those given (not None) that the tuner does not fix are common
    to every run.

    The outputs are checked (and may not overwrite the ``--tune`` file) before
    the data are read; nothing is written unless the release succeeds.
    """
    outputs = check_outputs({"-o": args.output, "--report": args.report},
                            inputs=[args.input, getattr(args, "schema", None), args.tune])
    if getattr(args, "engine", None) not in (None, "pandas"):
        raise InputError("--tune and --target-error read the table in memory: use --engine pandas")
    if args.n_rows is None:
        raise InputError("--tune and --target-error need --n-rows: every run's table is resampled to this common, "
                         "public size before it is scored")
    if args.target_error is not None and args.max_epsilon is None:
        raise InputError("--target-error needs --max-epsilon (the cap on the worst-case epsilon)")
    if args.tune and args.max_epsilon is not None:
        raise InputError("--max-epsilon belongs to --target-error; with --tune the budget is --epsilon")
    candidates = read_candidates(args.tune) if args.tune else None
    common = {name: value for name, value in options.items() if value is not None and name not in FIXED_KEYS}
    shared = dict(eval_workload=args.eval_workload or args.queries, n_out=args.n_rows, random_state=args.seed,
                  relation=args.relation, delta=args.delta)
    if candidates is not None:
        result = tune(read(), args.queries, candidates, epsilon=args.epsilon, target_failure=args.target_failure,
                      **shared, **common)
    else:
        result = accuracy_first(read(), args.queries, target_error=args.target_error, max_epsilon=args.max_epsilon,
                                epsilon_1=args.epsilon, **shared, **common)
    jobs = [(outputs["-o"], lambda tmp: dump_table(result.data, tmp, args.output))]
    if args.report:
        jobs.append((outputs["--report"], lambda tmp: csvfile.dump_json(result.report.to_dict(), tmp)))
    write_outputs(jobs)
    print(result.report.summary())
    print(f"output: {args.output} ({len(result.data)} rows)")
    return 0
