"""The ``synthdp`` command's parser: its sub-commands, their flags and their help.

The flags of the options are not listed here: each plain scalar option of
:class:`~synthdp.config.SynthesisConfig` becomes ``--its-name`` with the type,
choices, default and documentation declared there (:func:`derived_flag`);
the few written by hand are in :data:`GENERATE_FLAGS` and :data:`SCHEMA_FLAGS`,
and :data:`API_ONLY` says why an option has no flag.

Built from light modules only (the option declarations, argparse): ``--help``,
``--version`` and usage errors answer without loading numpy, pandas or the
solvers, which only the module of the command that runs imports
(tests/repository/test_packaging.py keeps that true).
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Sequence

from synthdp._version import __version__
from synthdp.config import GROUPS, SynthesisConfig, option_doc, options_in
from synthdp.core.options import nearest
from synthdp.core.parameters import RULES
from synthdp.methods.game.defaults import PLAN_DEFAULTS


OUTPUTS_HELP = ("Outputs are checked before anything private runs (existing folder you can write in; not an input, "
                "not another output, not a directory, device or FIFO) and all outputs of a run are written as one "
                "unit: all appear, or none and existing files stay as they were. A symbolic link to an existing "
                "regular file is written through (the link stays); any other link is refused. SIGINT and SIGTERM "
                "stop the run with a message and leave no temporary file (exit status 130 and 143).")


VERBOSE_HELP = ("more logging (-vv for debug). Debug logs contain PRIVATE values (n, noisy objective values, "
                "solver failure counts): never attach them to a release")


def _rows_per_unit(text: str) -> int | str:
    """``--max-rows-per-unit``: an integer, or ``auto``."""
    return text if text == "auto" else int(text)


#: Options whose flags are written by hand, by option: the flags and their argparse settings. Their help is the
#: option's documentation followed by ``syntax`` (how to write the value), their default the option's (a switch's
#: is False). Each is here for a reason: a name that is not the option's (``--queries``, ``--seed``), an inverted
#: switch (``--quiet``), or a value that is not one scalar (a list of columns, ``COL=VALUE`` pairs, an integer or
#: ``auto``).
GENERATE_FLAGS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "query_class": (("--queries",), dict(syntax="(default %(default)s)")),
    "random_state": (("--seed",), dict(type=int)),
    "max_rows_per_unit": (("--max-rows-per-unit",), dict(metavar="K", type=_rows_per_unit)),
    "progress": (("-q", "--quiet"), dict(action="store_true", help="no progress bar")),
    "measure_options": (("--measure-option",), dict(action="append", nargs="+", metavar="NAME=VALUE",
                                                    dest="measure_options",
                                                    syntax="E.g. --measure-option rounds_per_attribute=4 "
                                                           "cover_share=1/2")),
    "point_masses": (("--no-point-masses",), dict(action="store_false", dest="point_masses",
                                                  syntax="On by default; --no-point-masses keeps none: the cells "
                                                         "are PrivTree's alone.")),
}
#: The hand-written flags of the domain (shared by generate, evaluate and schema), as :data:`GENERATE_FLAGS`.
SCHEMA_FLAGS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "schema": (("--schema",), dict(metavar="FILE")),
    "categorical": (("--categorical",), dict(nargs="+", metavar="COL")),
    "bounds": (("--bounds",), dict(action="append", nargs="+", metavar="COL=LO:HI",
                                   syntax="E.g. --bounds age=17:90 hours-per-week=1:99 joined=2000-01-01..2030-12-31")),
    "bins": (("--bins",), dict(action="append", nargs="+", metavar="COL=K", syntax="E.g. --bins age=8")),
    "cuts": (("--cuts",), dict(action="append", nargs="+", metavar="COL=C1,C2,...", syntax="E.g. --cuts age=25,45,65")),
    "datetimes": (("--datetime",), dict(action="append", nargs="+", metavar="COL[=FORMAT]",
                                        syntax="E.g. --datetime joined=%%d/%%m/%%Y")),
    "learn_bounds": (("--learn-bounds",), dict(action="append", nargs="+", metavar="COL[=DTYPE]",
                                               syntax="synthdp schema also takes 'all' (every column of numbers "
                                                      "without public bounds).")),
    "decimals": (("--decimals",), dict(action="append", nargs="+", metavar="COL=K", syntax="E.g. --decimals fnlwgt=0")),
    "dtypes": (("--dtype",), dict(action="append", nargs="+", metavar="COL=TYPE",
                                  syntax="E.g. --dtype age=int64 'joined=datetime64[ns, UTC]'")),
    "nullable": (("--nullable",), dict(nargs="+", metavar="COL")),
    "derived": (("--derived",), dict(action="append", nargs="+", metavar="COL=EXPR",
                                     syntax="E.g. --derived year=joined.year 'net=gross - tax'")),
    "missing": (("--missing",), dict(action="append", metavar="TOKEN",
                                     syntax="The CSV reader applies them (e.g. --missing ?).")),
}
#: Options the command line does not offer, and why.
API_ONLY = {
    "links": "given as --link CHILD.COL=PARENT.COL with two input files (synthdp.cli.linked)",
    "keys": "the child table's own key: from Python only for now (docs/privacy.md §12)",
    "categories": "a category list per column is too long for flags: it belongs in a schema file (--schema, "
                  "drafted by 'synthdp schema')",
}


def _flag_help(name: str, syntax: str = "") -> str:
    """The ``--help`` text of option ``name``: its documentation (``%`` escaped for argparse), then ``syntax``."""
    return " ".join((option_doc(name, PLAN_DEFAULTS).replace("%", "%%"), syntax)).strip()


def scalar_type(name: str) -> type | None:
    """The type of option ``name`` if it is one scalar (``bool``, ``int``, ``float`` or ``str``, or None), else None.

    Read off the annotation as written (:mod:`synthdp.config` names its other types for type checkers only).
    """
    kinds = [kind.strip() for kind in SynthesisConfig.__dataclass_fields__[name].type.split("|")]
    kinds = [kind for kind in kinds if kind != "None"]
    return {"bool": bool, "int": int, "float": float, "str": str}.get(kinds[0]) if len(kinds) == 1 else None


def derived_flag(group, name: str) -> None:
    """The flag of a scalar option, from its declaration: ``--name-with-dashes``, type, choices, default, help."""
    field, kind = SynthesisConfig.__dataclass_fields__[name], scalar_type(name)
    flag, required = "--" + name.replace("_", "-"), field.default is dataclasses.MISSING
    if kind is None or (kind is bool and field.default is not False):
        raise TypeError(f"option {name!r} is not a plain scalar switched on by its flag: write its flag by hand "
                        "(GENERATE_FLAGS, SCHEMA_FLAGS) or list it in API_ONLY with the reason")
    if kind is bool:
        group.add_argument(flag, action="store_true", help=_flag_help(name))
        return
    default = None if required else field.default
    group.add_argument(flag, type=kind, choices=RULES[name].choices, default=default, required=required,
                       help=_flag_help(name, "" if default is None else "(default %(default)s)"))


def _add_flags(group, names: Sequence[str], hand_written: dict) -> None:
    """The flags of the options ``names`` in ``group``, in declaration order: ``hand_written`` ones, else derived."""
    for name in names:
        if name in hand_written:
            flags, settings = hand_written[name]
            settings = dict(settings)
            syntax = settings.pop("syntax", "")
            if settings.get("action") != "store_true":
                settings["default"] = SynthesisConfig.__dataclass_fields__[name].default
            group.add_argument(*flags, **{"help": _flag_help(name, syntax), **settings})
        elif name not in API_ONLY:
            derived_flag(group, name)


def derived_names(groups: Sequence[str]) -> list[str]:
    """The options of ``groups`` whose flags are derived (neither hand-written nor API-only)."""
    special = {*GENERATE_FLAGS, *SCHEMA_FLAGS, *API_ONLY}
    return [name for group in groups for name in options_in(group) if name not in special]


#: ``synthdp generate``'s ``--schema``: once per table with ``--link`` (by the file's stem, the columns it holds, or
#: ``TABLE=FILE``; :func:`synthdp.cli.linked.table_schemas`), once for one table.
LINKED_SCHEMA_FLAG = (("--schema",), dict(metavar="[TABLE=]FILE", action="append", syntax=(
    "With --link give one per table (--schema customers.json --schema orders.json): each goes to the table named by "
    "its file's stem, else to the one table holding every column it lists; TABLE=FILE names the table")))


def _schema_options(p: argparse.ArgumentParser, omit: Sequence[str] = (), hand_written: dict = SCHEMA_FLAGS) -> None:
    """The flags of the domain (the ``schema`` options but ``omit``; ``hand_written``'s flags where it has one) and of
    reading the CSV."""
    g = p.add_argument_group(GROUPS["schema"])
    _add_flags(g, [n for n in options_in("schema") if n not in (*omit, "missing")], hand_written)
    r = p.add_argument_group("reading the CSV")
    _add_flags(r, ["missing"], SCHEMA_FLAGS)
    r.add_argument("--columns", help="comma-separated column names, one per field, for a CSV without a header row")
    r.add_argument("--skip-rows", type=int, default=0, metavar="N",
                   help="skip N leading lines (a title, a notice) before the header row or the first record")
    r.add_argument("--drop", nargs="+", metavar="COL", help="leave these columns of the CSV out (e.g. an ID column)")
    r.add_argument("--sep", default=",", help="field separator of the CSV (default ','; e.g. ';' or '\\t')")
    r.add_argument("--encoding", default="utf-8", help="text encoding of the CSV (default utf-8; e.g. latin-1)")


#: The ``synthdp bench`` targets and their modules, imported by name when one runs (:func:`cmd_bench`).
BENCHES = {
    "oracles": "synthdp.bench.oracles",
    "evaluation": "synthdp.bench.answering",
    "accuracy": "synthdp.bench.accuracy",
    "scale": "synthdp.bench.scale",
    "evaluator": "synthdp.bench.certification",
    "classes": "synthdp.bench.classes",
    "numeric": "synthdp.bench.numeric",
    "width": "synthdp.bench.width",
    "reading": "synthdp.bench.reading",
    "small": "synthdp.bench.small",
}


def build_parser() -> argparse.ArgumentParser:
    """The ``synthdp`` command and its sub-commands (one function each)."""
    parser = argparse.ArgumentParser(
        prog="synthdp", description="Differentially private synthetic tables with certified solver oracles.")
    parser.add_argument("--version", action="version", version=f"synthdp {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE_HELP)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_generate_parser, _sample_parser, _evaluate_parser, _schema_parser, _bench_parser, _demo_parser):
        add(sub, common)
    return parser


def _generate_parser(sub, common: argparse.ArgumentParser) -> None:
    """``synthdp generate``: every option of :class:`SynthesisConfig` but :data:`API_ONLY`, group by group."""
    g = sub.add_parser("generate", help="private synthetic CSV from a CSV", parents=[common], epilog=OUTPUTS_HELP)
    g.add_argument("input", help="input CSV (with a header row), Parquet file, directory of them, or glob")
    g.add_argument("child", nargs="*", help="with --link: the child table's CSV (the first is the parent's), or "
                   "several files of it (orders_part*.csv), a glob or a directory, read part by part with --engine dask")
    g.add_argument("--link", metavar="CHILD.COL=PARENT.COL",
                   help="release two linked tables as one (docs/privacy.md §12): the child's foreign key and the "
                        "parent's key, e.g. orders.customer_id=customers.customer_id (each table named after its "
                        "file); needs --max-rows-per-unit K, at most K children kept per parent (or auto: K chosen "
                        "privately), and -o a folder")
    g.add_argument("-o", "--output", required=True, help="output table: .csv, or .parquet (needs pyarrow); "
                   "checked before anything runs, written with --report as one unit (with --link: a folder)")
    g.add_argument("--report", help="write the full report as JSON here")
    g.add_argument("--save-model", metavar="FILE", help="also write the released model (a zip of JSON and numpy "
                   "arrays: the fitted model, the schema, the release report; nothing private) for synthdp sample")
    for group, heading in GROUPS.items():
        if group == "schema":
            _schema_options(g, hand_written={**SCHEMA_FLAGS, "schema": LINKED_SCHEMA_FLAG})
        else:
            _add_flags(g.add_argument_group(heading), options_in(group), GENERATE_FLAGS)
    add_tuning_arguments(g)


def _sample_parser(sub, common: argparse.ArgumentParser) -> None:
    m = sub.add_parser("sample", help="more rows from a model saved by generate --save-model (free)",
                       parents=[common], epilog=OUTPUTS_HELP,
                       description="Draw fresh rows from a released model: post-processing of the release, no "
                       "privacy cost (docs/privacy.md §10.9).")
    m.add_argument("model", help="model file written by synthdp generate --save-model or Synthesizer.save")
    m.add_argument("-n", "--rows", type=int, required=True, help="number of rows to draw (from two linked tables' "
                   "model: of parents, each with its children)")
    m.add_argument("-o", "--output", required=True, help="output table: .csv, or .parquet (needs pyarrow); from two "
                   "linked tables' model, an existing folder, where each table is written as <table>.csv")
    m.add_argument("--seed", type=int, help="seed of the draw: the same seed gives the same rows")
    m.add_argument("--condition", action="append", metavar="COL=VALUE",
                   help="draw only rows with this value in COL, from the model's conditional distribution (a "
                   "category, or a number inside the column's bounds; COL= asks for the missing value); repeatable, "
                   "e.g. --condition region=N --condition age=40; from two linked tables' model, on the parent "
                   "table's columns or its count of children n_<child>, the children drawn given each parent")


def _evaluate_parser(sub, common: argparse.ArgumentParser) -> None:
    e = sub.add_parser("evaluate", help="(non-private) error of a synthetic CSV against the real one",
                       parents=[common], epilog=OUTPUTS_HELP)
    e.add_argument("real", help="the real (private) table, CSV")
    e.add_argument("synthetic", help="the synthetic CSV, as synthdp generate writes it (with --link: the child "
                   "table's real CSV)")
    e.add_argument("--queries", default="marginals:3", help="the queries to compare on: marginals:K or a workload "
                   "(per-marginal errors), or a class such as conjunctions or halfspaces (certified worst case)")
    e.add_argument("--plot", help="write a plot of the per-marginal errors: the worst marginals and the "
                   "distribution of all; format from the suffix (.png, .pdf or .svg)")
    e.add_argument("--json", metavar="FILE", help="also write the figures as JSON (summary and every marginal's "
                   "errors, or the certified worst case) for programs")
    e.add_argument("--top", type=int, default=20, help="rows of the error table to print")
    e.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds for the certified maximum error over a class that is not marginals or a workload "
                        "(conjunctions, monotone, disjunctions, parities, halfspaces); exit status 1 when it could "
                        "not be certified in time (the best bounds are printed)")
    q = e.add_argument_group("quality page (for the data owner only: it shows statistics of the real data)")
    q.add_argument("--html", metavar="FILE", help="write the quality report as one self-contained HTML page: the "
                   "score and its parts, every column's picture, pair trends, correlations, point masses, warnings")
    q.add_argument("--report", metavar="RELEASE", help="the release JSON synthdp generate --report wrote: its "
                   "summary (budget spent, method, what was learned privately) goes on the page")
    q.add_argument("--target", metavar="COL", help="ML efficacy: predict COL with a model trained on the synthetic "
                   "table and one trained on real rows, both tested on held-out real rows (needs synthdp[quality])")
    q.add_argument("--certify", metavar="CLASS", help="add the certified worst case over a query class (e.g. "
                   "conjunctions), within --time-limit seconds")
    t = e.add_argument_group("two linked tables (synthdp evaluate PARENT.csv CHILD.csv --synthetic DIR --link ...)")
    t.add_argument("--link", metavar="CHILD.COL=PARENT.COL", help="compare two linked tables, each named after its "
                   "file: prints the pair's summary and writes it with --html and --json (each table, children per "
                   "parent, the parent x child pairs, the synthetic keys)")
    t.add_argument("--synthetic", dest="synthetic_folder", metavar="DIR", help="with --link: the folder synthdp "
                   "generate --link wrote, one <table>.csv per table")
    t.add_argument("--max-rows-per-unit", dest="max_rows_per_unit", type=int, metavar="K", help="with --link and "
                   "no --report: the run's K, to compare with the real pair bounded to K children per parent")
    # the owner's own check reads the categories off the real table: there is nothing to make public
    _schema_options(e, omit=("unsafe_public_categories", "derived"))


def _schema_parser(sub, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("schema", help="draft a schema file from a CSV, for the data owner to review",
                       parents=[common], epilog=OUTPUTS_HELP,
                       description="Draft a schema (JSON) from a CSV. What you pass (--bounds, --bins, --cuts, "
                       "--datetime, --decimals, --discretise, --categorical, --nullable) is kept; everything else "
                       "(category lists, bounds of numeric columns, whether a column has missing values) is read "
                       "off the data and listed under '_read_off_data'. Review those parts, replace them with public "
                       "values, delete the '_read_off_data' entry, then pass the file to generate --schema.")
    s.add_argument("input", help="input CSV")
    s.add_argument("-o", "--output", required=True, help="schema JSON to write")
    s.add_argument("--learn-categories", nargs="+", metavar="COL",
                   help="categorical columns whose categories are left to be learned privately instead of read off "
                        "the data ('all': every column not made numeric by --bounds, --bins, --cuts, --datetime or "
                        "--learn-bounds, nor a column of numbers, which gets bounds to review or --learn-bounds all, nor "
                        "a column of dates, which gets bounds to review (--categorical keeps it text); "
                        "leave an ID column out with --drop); needs a delta at generate "
                        "(docs/privacy.md §9, §10.5)")
    _schema_options(s, omit=("schema", "unsafe_public_categories", "derived"))


def _bench_parser(sub, common: argparse.ArgumentParser) -> None:
    b = sub.add_parser("bench", help="benchmarks: oracles, evaluation, accuracy", parents=[common])
    b.add_argument("target", choices=sorted(BENCHES))
    b.add_argument("rest", nargs=argparse.REMAINDER, help="options of the benchmark (see synthdp bench T --help)")


def _demo_parser(sub, common: argparse.ArgumentParser) -> None:
    d = sub.add_parser("demo", help="private generation on the embedded demo table", parents=[common])
    d.add_argument("--epsilon", type=float, default=1.0)
    d.add_argument("--rows", type=int, default=20_000, help="size of the generated demo table")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("-q", "--quiet", action="store_true")


def add_tuning_arguments(parser: argparse.ArgumentParser) -> None:
    """The tuning options of ``synthdp generate`` (run by :mod:`synthdp.cli.tune`)."""
    t = parser.add_argument_group("private tuning (docs/privacy.md §5; needs --n-rows)")
    mode = t.add_mutually_exclusive_group()
    mode.add_argument("--tune", metavar="FILE.json",
                      help="release the best of the configurations in this JSON list (objects of generate options, "
                           "e.g. [{\"rounds\": 40}, {\"rounds\": 100, \"respond_to\": \"union\"}]), chosen privately "
                           "by random stopping within --epsilon/--delta")
    mode.add_argument("--target-error", type=float, metavar="ALPHA",
                      help="accuracy-first: double the budget from --epsilon until the max cell error on "
                           "--eval-workload privately tests at most ALPHA (needs --max-epsilon)")
    t.add_argument("--max-epsilon", type=float, help="accuracy-first: the cap on the worst-case epsilon")
    t.add_argument("--eval-workload", help="public workload of marginals that scores tables (default: --queries)")
    t.add_argument("--target-failure", type=float, default=0.1,
                   help="--tune: target probability of missing the best configuration's median score (default "
                        "%(default)s); the expected number of runs is 2 x (configurations) / this")


def refuse_unknown_flags(parser: argparse.ArgumentParser, command: str, unknown: Sequence[str]) -> None:
    """argparse's refusal of arguments no flag of ``command`` takes, with the flags nearest to each misspelt one
    (``--round 3``: did you mean --rounds?).  Exits with status 2."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    flags = [flag for action in sub._actions for flag in action.option_strings if flag.startswith("--")]
    hints = [f"{word}: did you mean {' or '.join(near)}?" for word in unknown if word.startswith("--")
             if (near := nearest(word.partition("=")[0], flags))]
    sub.error(f"unrecognized arguments: {' '.join(unknown)}" + "".join(f"; {hint}" for hint in hints))
