"""``synthdp generate``: a private synthetic table from a table (with ``--tune``/``--target-error``:
:mod:`synthdp.cli.tune`)."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from synthdp.accounting.spend import spend_text
from synthdp.api import synthesize
from synthdp.cli import linked, tune
from synthdp.cli.common import (check_schema_columns, flat, no_skip_rows, query_inputs, read_input, read_options,
                                schema_kwargs, unit_columns)
from synthdp.cli.parser import derived_names
from synthdp.config import GROUPS, SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.progress import Phases
from synthdp.engines.dask import DaskEngine  # light: Dask itself is imported only when the engine runs
from synthdp.files import csvfile
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.files.parquet import dump_table, require_pyarrow, table_format
from synthdp.files.sources import file_columns, list_files
from synthdp.methods.measure.settings import measure_options_from_text
from synthdp.model import dump_model
from synthdp.owner_check import FarFromRealWarning
from synthdp.plan import check_method
from synthdp.release_check import ReleaseWarning


#: Exit status of ``synthdp generate --strict`` when the release has columns far from the real table (the option's
#: documentation says it; 2 is an error, 128 + N a signal).
STRICT_STATUS = 3


def generate_options(args) -> dict[str, Any]:
    """The options of ``synthdp generate`` by name: the derived flags' values, then the hand-written ones parsed."""
    options = {name: getattr(args, name) for name in derived_names(list(GROUPS))}
    options.update(schema_kwargs(args), query_class=args.queries, random_state=args.seed,
                   max_rows_per_unit=args.max_rows_per_unit, progress=not args.quiet, point_masses=args.point_masses,
                   measure_options=_measure_options(args.measure_options))
    return options


def _measure_options(items: list | None):
    """``--measure-option NAME=VALUE ...``: select-measure-estimate's settings (None when none is given)."""
    if not items:
        return None
    return measure_options_from_text(flat(items))


def run(args) -> int:
    if args.link is not None or args.child:  # two linked tables, one release (docs/privacy.md §12)
        if tune.requested(args) or getattr(args, "max_epsilon", None) is not None:
            raise InputError("--tune, --target-error and --max-epsilon are not available with --link yet: release "
                             "the two tables at one --epsilon")
        return linked.run(args, generate_options(argparse.Namespace(**{**vars(args), "schema": None})))
    args = argparse.Namespace(**{**vars(args), "schema": one_schema(args.schema)})
    outputs = check_outputs({"-o": args.output, "--report": args.report, "--save-model": args.save_model},
                            inputs=[args.input, args.schema, *query_inputs(args.queries)])
    if table_format(args.output, "-o") == "parquet":
        require_pyarrow()
    options = generate_options(args)
    if tune.requested(args):  # --tune FILE.json / --target-error ALPHA: docs/privacy.md §5
        for flag, given in (("--save-model", args.save_model), ("--strict", args.strict)):
            if given:
                raise InputError(f"{flag} is not available with --tune or --target-error yet: use it with a plain "
                                 "generate run of the chosen settings")
        return tune.generate(args, options, lambda: read_input(args.input, args, schema=options["schema"]))
    result = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReleaseWarning)  # the closing summary gives them as "warning: ..."
            warnings.simplefilter("ignore", FarFromRealWarning)  # and these in its lines for the data owner
            result = _synthesize(args, SynthesisConfig.of(**options))  # every option checked before anything is read
        jobs = [(outputs["-o"], lambda tmp: dump_table(result.data, tmp, args.output, result.schema))]
        if args.report:
            jobs.append((outputs["--report"], lambda tmp: csvfile.dump_json(result.report.to_dict(), tmp)))
        if args.save_model:
            jobs.append((outputs["--save-model"], lambda tmp: dump_model(result.model, tmp)))
        with Phases(enabled=not args.quiet)(f"writing {', '.join(str(out.target) for out, _ in jobs)}"):
            write_outputs(jobs)
    except KeyboardInterrupt as interrupt:  # what the ledger was charged, for main's message (docs/privacy.md §10.1)
        if result is not None:  # the release was made: its whole spend
            interrupt.charged = spend_text(result.report.epsilon_spent, result.report.delta_spent)
        elif not hasattr(interrupt, "charged"):  # before the run's first step
            interrupt.charged = "nothing"
        raise
    print(result.report.summary())
    print(f"output: {args.output} ({len(result.data)} rows)" +  # no run time: it depends on the data
          (f"; model: {args.save_model} (synthdp sample draws more rows from it, free)" if args.save_model else ""))
    if result.comparison is not None and (result.far_from_real or not args.quiet):  # -q: only what needs a look
        print(result.comparison.summary(), file=sys.stderr)  # the owner's, not the release's: never on stdout
    if args.strict and (result.comparison is None or result.far_from_real):
        found = ("has columns far from the real table (listed above, for the data owner only)" if result.comparison
                 else "could not be compared with the real table (the warning above says why)")
        print(f"synthdp: --strict: the release {found}; the outputs are written, and the exit status is "
              f"{STRICT_STATUS}", file=sys.stderr)
        return STRICT_STATUS
    return 0


def one_schema(given: list[str] | None) -> str | None:
    """The one ``--schema`` file of a single table (``--schema`` is given once per table with ``--link``)."""
    if given and len(given) > 1:
        raise InputError(f"--schema is given {len(given)} times ({', '.join(given)}); one table takes one schema "
                         "file (with --link, one per table)")
    return given[0] if given else None


def _synthesize(args, config: SynthesisConfig):
    """The run of ``synthdp generate``: in memory, or part by part on a Dask cluster."""
    check_method(config)  # before anything is read
    if args.engine == "dask":  # the files are counted part by part on the cluster, never read here
        no_skip_rows(args, "--engine dask counts the files part by part")
        read = read_options(args)
        columns = dict.fromkeys(c for f in list_files(args.input) for c in file_columns(f, read))  # headers only
        unknown = [c for c in args.drop or [] if c not in columns]
        if unknown:
            raise InputError(f"--drop names {unknown}, which {args.input!r} does not have; its columns are "
                             f"{list(columns)}")
        if config.schema is not None:  # as in memory
            check_schema_columns(config.schema, [c for c in columns if c not in
                                                  {*unit_columns(args), *(args.drop or []), *(config.derived or ())}],
                                  args.input)
        return synthesize(args.input, config, engine=DaskEngine(scheduler=args.scheduler, options=read))
    df = read_input(args.input, args, schema=config.schema)
    if config.schema is not None:
        left_out = {*unit_columns(args), *(config.derived or ())}
        check_schema_columns(config.schema, [c for c in df.columns if c not in left_out], args.input)
    return synthesize(df, config)
