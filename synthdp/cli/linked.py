"""``synthdp generate PARENT.csv CHILD.csv --link CHILD.COL=PARENT.COL -o DIR``: two linked tables released as one
release (docs/privacy.md §12), one file per table in ``DIR``, named after its input.

Each table is named by its file's stem (``customers.csv`` is ``customers``).  A column option (``--bounds``,
``--categorical``, ...) goes to the table that holds the column; a column both tables hold, or ``--schema``, is
refused for now; ``--drop`` leaves a column out of the table that holds it.  Nothing is written unless every output can be (existing files are never overwritten), and all
outputs are written as one unit.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from synthdp.api import release
from synthdp.cli.common import read_input
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.files import csvfile
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.files.parquet import dump_table
from synthdp.linked.generation import dump_linked
from synthdp.linked.links import TABLE_OPTIONS

__all__ = ["drop_columns", "parse_link", "per_table", "run", "table_names"]


def parse_link(text: str) -> dict[str, str]:
    """``--link orders.customer_id=customers.customer_id`` as the ``links`` option."""
    child, sep, parent = (text or "").partition("=")
    if not sep or not child or not parent:
        raise InputError(f"--link {text!r} must be CHILD.COLUMN=PARENT.COLUMN, e.g. "
                         "--link orders.customer_id=customers.customer_id")
    return {child: parent}


def per_table(options: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> dict[str, Any]:
    """The column options of one table's flags, each keyed by the table that holds its columns (the Python form)."""
    if options.get("schema") is not None:
        raise InputError("--schema describes one table; with --link give the columns' options as flags (each goes "
                         "to the table that holds the column), or use the Python API with a schema per table")
    out = dict(options)
    for name in TABLE_OPTIONS:
        value = options.get(name)
        if value is None:
            continue
        split: dict[str, Any] = {}
        for column in value:
            part = split.setdefault(holder(tables, column, f"--{name.replace('_', '-')}"),
                                    {} if isinstance(value, Mapping) else [])
            if isinstance(value, Mapping):
                part[column] = value[column]
            else:
                part.append(column)
        out[name] = split
    return out


def drop_columns(tables: Mapping[str, pd.DataFrame], columns: list[str]) -> dict[str, pd.DataFrame]:
    """``--drop COL``: each column left out of the table that holds it (the child's own key, say), before anything
    private runs; a column neither table holds, or both hold, is refused."""
    out = dict(tables)
    for column in columns:
        table = holder(tables, column, "--drop")
        out[table] = out[table].drop(columns=[column])
    return out


def holder(tables: Mapping[str, pd.DataFrame], column: str, flag: str) -> str:
    """The one table that holds ``column``, or a refusal naming ``flag``."""
    holders = [t for t, df in tables.items() if column in df.columns]
    if len(holders) != 1:
        where = "both tables" if holders else f"neither table ({', '.join(tables)})"
        raise InputError(f"{flag} names column {column!r}, which {where} holds; with --link a column option must "
                         "name a column of exactly one table")
    return holders[0]


def table_names(parent: str, child: str) -> list[str]:
    """Each table named by its file's stem (``customers.csv`` is ``customers``); two files of one name refused."""
    names = [Path(parent).stem, Path(child).stem]
    if names[0] == names[1]:
        raise InputError(f"both files are named {names[0]!r}: each table is named after its file; rename one")
    return names


def run(args, options: dict[str, Any]) -> int:
    """Read both tables, release them as one, write ``DIR/<table>.csv`` for each (and the report and the model
    when asked) as one unit, refusing before anything private runs when an output already exists."""
    if args.child is None or args.link is None:
        raise InputError("two tables need both files and --link CHILD.COLUMN=PARENT.COLUMN, e.g. synthdp generate "
                         "customers.csv orders.csv --link orders.customer_id=customers.customer_id -o out/")
    names = table_names(args.input, args.child)
    folder = Path(args.output)
    if not folder.is_dir():
        raise InputError(f"-o {args.output!r} must be an existing folder: with --link each table is written there "
                         "as <table>.csv")
    paths = {name: folder / f"{name}.csv" for name in names}
    existing = [str(p) for p in (*paths.values(), args.report, args.save_model) if p and Path(p).exists()]
    if existing:
        raise InputError(f"{existing} exist already; nothing is overwritten with --link: choose another folder or "
                         "remove them")
    outputs = check_outputs({**{f"-o {n}": p for n, p in paths.items()}, "--report": args.report,
                             "--save-model": args.save_model}, inputs=[args.input, args.child])
    tables = drop_columns({name: read_input(path, argparse.Namespace(**{**vars(args), "drop": None}))
                           for name, path in zip(names, (args.input, args.child))}, args.drop or [])
    config = SynthesisConfig.of(**per_table({**options, "links": parse_link(args.link)}, tables))
    result = release(tables, config)
    jobs = [(outputs[f"-o {n}"], lambda tmp, n=n: dump_table(result.tables[n], tmp, paths[n])) for n in names]
    if args.report:
        jobs.append((outputs["--report"], lambda tmp: csvfile.dump_json(result.report.to_dict(), tmp)))
    if args.save_model:
        jobs.append((outputs["--save-model"], lambda tmp: dump_linked(result.model, tmp)))
    write_outputs(jobs)
    print(result.report.summary())
    print("output: " + ", ".join(f"{paths[n]} ({len(result.tables[n])} rows)" for n in names))
    return 0
