"""``synthdp sample``: more rows from a saved model (post-processing of its release, no privacy cost)."""

from __future__ import annotations

from synthdp.cli.common import _pairs, table_paths
from synthdp.core.errors import InputError
from synthdp.core.parameters import check
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.files.parquet import dump_table, require_pyarrow, table_format
from synthdp.linked.generation import LinkedModel, is_linked_file
from synthdp.model import FittedModel


def run(args) -> int:
    """``synthdp sample MODEL -n N -o OUT [--condition COL=VALUE ...]``: fresh rows from a saved model, given the
    conditions when there are some (post-processing, docs/privacy.md §10.9); from two linked tables' model, ``N``
    parents with their children, written to the folder ``OUT`` as one file per table (§12 step 4)."""
    if is_linked_file(args.model):
        return _linked(args)
    outputs = check_outputs({"-o": args.output}, inputs=[args.model])
    if table_format(args.output, "-o") == "parquet":
        require_pyarrow()
    rows, conditions = _request(args)
    model = FittedModel.load(args.model)
    data = model.sample(rows, conditions=conditions, random_state=args.seed)
    write_outputs([(outputs["-o"], lambda tmp: dump_table(data, tmp, args.output, model.schema))])
    print(f"output: {args.output} ({len(data)} rows drawn from the model in {args.model}: post-processing of its "
          "release, no privacy cost)")
    return 0


def _linked(args) -> int:
    """Two linked tables' draw: ``-n`` parents (the conditions on their columns) with their children, as
    ``OUT/<table>.csv`` for each table, written as one unit and never over an existing file."""
    model = LinkedModel.load(args.model)
    names = [model.link.parent, model.link.child]
    paths = table_paths(args.output, names, "from a linked model")
    outputs = check_outputs({f"-o {name}": path for name, path in paths.items()}, inputs=[args.model])
    rows, conditions = _request(args)
    tables = model.sample(rows, random_state=args.seed, conditions=conditions)
    schemas = model.schemas()
    write_outputs([(outputs[f"-o {name}"], lambda tmp, name=name: dump_table(tables[name], tmp, paths[name],
                                                                            schemas[name])) for name in names])
    print("output: " + ", ".join(f"{paths[name]} ({len(tables[name])} rows)" for name in names) +
          f", drawn from the model in {args.model}: post-processing of its release, no privacy cost")
    return 0


def _request(args) -> tuple[int, dict | None]:
    """``-n`` checked (naming the flag) and the ``--condition`` pairs read."""
    try:
        check("n_rows", args.rows)
    except InputError as error:
        raise InputError(f"-n {args.rows}: {error}") from None
    return args.rows, _pairs(args.condition, "--condition", lambda text: text or None)
