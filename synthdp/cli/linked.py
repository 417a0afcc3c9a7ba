"""``synthdp generate PARENT.csv CHILD.csv --link CHILD.COL=PARENT.COL -o DIR``: two linked tables released as one
release (docs/privacy.md §12), one file per table in ``DIR``, named after its input.

Each table is named by its file's stem (``customers.csv`` is ``customers``); a child table given by several files
(``orders_part*.csv``), a glob or a directory is named by the table the ``--link`` names. With ``--engine dask`` the
child's files are counted part by part on the cluster, never read here (:mod:`synthdp.linked.files`). A column
option (``--bounds``, ``--categorical``, ...) goes to the table that holds the column, a column both tables hold is
refused; ``--schema`` is given once per table (:func:`table_schemas`); ``--drop`` leaves a column out of the table
that holds it. Nothing is written unless every output can be (existing files are never overwritten), and all outputs
are written as one unit.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from synthdp.api import release
from synthdp.cli.common import check_schema_columns, no_skip_rows, read_input, read_options, table_paths
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.engines.dask import DaskEngine  # light: Dask itself is imported only when the engine runs
from synthdp.files import csvfile
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.files.parquet import dump_table
from synthdp.files.sources import names_several, read_table
from synthdp.linked.files import child_files
from synthdp.linked.generation import dump_linked
from synthdp.linked.links import TABLE_OPTIONS, read_link

__all__ = ["drop_columns", "parse_link", "per_table", "read_tables", "run", "schema_files", "table_names",
           "table_schemas"]


def parse_link(text: str) -> dict[str, str]:
    """``--link orders.customer_id=customers.customer_id`` as the ``links`` option."""
    child, sep, parent = (text or "").partition("=")
    if not sep or not child or not parent:
        raise InputError(f"--link {text!r} must be CHILD.COLUMN=PARENT.COLUMN, e.g. "
                         "--link orders.customer_id=customers.customer_id")
    return {child: parent}


def per_table(options: Mapping[str, Any], tables: Mapping[str, pd.DataFrame],
              schemas: Mapping[str, Schema] | None = None) -> dict[str, Any]:
    """The column options of one table's flags, each keyed by the table that holds its columns (the Python form),
    and each table's schema file (:func:`table_schemas`); a column flag for a table its schema file describes is
    refused, as for one table (the file fixes that table's whole domain)."""
    schemas = dict(schemas or {})
    out = {**options, "schema": schemas or None}
    for name in TABLE_OPTIONS:
        value = options.get(name)
        if value is None or name == "schema":
            continue
        split: dict[str, Any] = {}
        flag = f"--{name.replace('_', '-')}"
        for column in value:
            table = holder(tables, column, flag)
            if table in schemas:
                raise InputError(f"{flag} names column {column!r} of table {table!r}, whose --schema file fixes its "
                                 "whole domain, so the flag would be ignored; put that setting in the schema file, or "
                                 f"drop the schema file of {table!r}")
            part = split.setdefault(table, {} if isinstance(value, Mapping) else [])
            if isinstance(value, Mapping):
                part[column] = value[column]
            else:
                part.append(column)
        out[name] = split
    return out


def schema_files(given: list[str] | None, names: list[str]) -> list[tuple[str | None, str]]:
    """Each ``--schema`` as (the table it names with ``TABLE=FILE``, or None; the file), before any table is read.
    The text before the first ``=`` names a table only when it is one of ``names`` (a file name may hold ``=``)."""
    out = []
    for text in given or []:
        table, sep, path = text.partition("=")
        out.append((table, path) if sep and table in names else (None, text))
    return out


def table_schemas(files: list[tuple[str | None, str]], tables: Mapping[str, pd.DataFrame],
                  links: Mapping[str, str]) -> dict[str, Schema]:
    """Each table's schema file: the table ``TABLE=FILE`` names, else the one whose name is the file's stem
    (``customers.json`` is ``customers``'s), else the one table holding every column the file lists.  Refused,
    naming the file and the fix: a file that fits both tables or neither, two files for one table, a file that
    lists a key column (keys are identifiers, never modelled) or a column its table does not hold, or a table column
    the file leaves out (the library would drop it with a warning)."""
    link = read_link(tables, links)  # refused as the run would refuse it, before any file is read
    keys = {link.parent: [link.key], link.child: [link.foreign_key]}
    schemas: dict[str, Schema] = {}
    for named, path in files:
        schema = Schema.load(path)
        listed = [*schema.names, *(d.name for d in schema.derived)]
        fits = [t for t, df in tables.items() if all(c in df.columns for c in listed)]
        table = named or (Path(path).stem if Path(path).stem in tables else None)
        if table is None and len(fits) != 1:
            where = f"both tables ({' and '.join(fits)})" if fits else "neither table"
            raise InputError(f"--schema {path}: {where} hold(s) every column it lists ({listed}); name its table: "
                             f"--schema TABLE={path} (TABLE one of {list(tables)}), or name the file after its table")
        table = table or fits[0]
        absent = [c for c in listed if c not in tables[table].columns]
        if absent:
            raise InputError(f"--schema {path} lists {absent}, which table {table!r} does not hold; remove them "
                             f"from the file, or give it to the table that holds them (--schema TABLE={path})")
        if table in schemas:
            raise InputError(f"--schema {path}: table {table!r} has a schema file already; give one per table")
        held = [c for c in keys.get(table, []) if c in listed]
        if held:
            raise InputError(f"--schema {path} lists {held}, a key column of table {table!r}: keys are identifiers, "
                             f"never modelled; remove it from the file (synthdp schema ... --drop {held[0]})")
        check_schema_columns(schema, [c for c in tables[table].columns if c not in keys.get(table, [])], path)
        schemas[table] = schema
    return schemas


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


def table_names(parent: str, child: str | list[str], link: str | None = None) -> list[str]:
    """Each table named by its file's stem (``customers.csv`` is ``customers``); a child given by several files
    (or a glob or a directory) by the table the ``link`` names (``orders`` in ``orders.customer_id=...``); two
    tables of one name refused."""
    files = [child] if isinstance(child, str) else child
    several = len(files) > 1 or names_several(files[0])
    if several and link is None:
        raise InputError(f"the child table is given by several files ({', '.join(files)}): name it with --link "
                         "CHILD.COLUMN=PARENT.COLUMN")
    names = [Path(parent).stem, next(iter(parse_link(link))).partition(".")[0] if several else Path(files[0]).stem]
    if names[0] == names[1]:
        raise InputError(f"both files are named {names[0]!r}: each table is named after its file; rename one")
    return names


def read_tables(args, names: list[str], children: list[str], links: Mapping[str, str]) -> dict[str, Any]:
    """The parent table read in memory; the child's file(s) too, or, with ``--engine dask``, left where they are
    (:class:`~synthdp.linked.files.ChildFiles`: their headers read only).  ``--drop`` applied to each."""
    read = argparse.Namespace(**{**vars(args), "drop": None})
    source = children[0] if len(children) == 1 else children
    if args.engine == "dask":
        no_skip_rows(args, "--engine dask counts the child's files part by part")
        child = child_files(source, names[1], links, read_options(args))
    elif len(children) == 1:
        child = read_input(source, read)
    else:
        no_skip_rows(args, "the child table is given by several files")
        child = read_table(source, read_options(args))
    return drop_columns({names[0]: read_input(args.input, read), names[1]: child}, args.drop or [])


def run(args, options: dict[str, Any]) -> int:
    """Read both tables, release them as one, write ``DIR/<table>.csv`` for each (and the report and the model
    when asked) as one unit, refusing before anything private runs when an output already exists."""
    if not args.child or args.link is None:
        raise InputError("two tables need both files and --link CHILD.COLUMN=PARENT.COLUMN, e.g. synthdp generate "
                         "customers.csv orders.csv --link orders.customer_id=customers.customer_id -o out/")
    names = table_names(args.input, args.child, args.link)
    paths = table_paths(args.output, names, "with --link", args.report, args.save_model)
    files = schema_files(args.schema, names)
    outputs = check_outputs({**{f"-o {n}": p for n, p in paths.items()}, "--report": args.report,
                             "--save-model": args.save_model}, inputs=[args.input, *args.child, *(f for _, f in files)])
    links = parse_link(args.link)
    tables = read_tables(args, names, args.child, links)
    config = SynthesisConfig.of(**per_table({**options, "links": links}, tables, table_schemas(files, tables, links)))
    engine = DaskEngine(scheduler=args.scheduler, options=read_options(args)) if args.engine == "dask" else None
    result = release(tables, config, engine)
    schemas = result.model.schemas()
    jobs = [(outputs[f"-o {n}"], lambda tmp, n=n: dump_table(result.tables[n], tmp, paths[n], schemas[n]))
            for n in names]
    if args.report:
        jobs.append((outputs["--report"], lambda tmp: csvfile.dump_json(result.report.to_dict(), tmp)))
    if args.save_model:
        jobs.append((outputs["--save-model"], lambda tmp: dump_linked(result.model, tmp)))
    write_outputs(jobs)
    print(result.report.summary())
    print("output: " + ", ".join(f"{paths[n]} ({len(result.tables[n])} rows)" for n in names))
    return 0
