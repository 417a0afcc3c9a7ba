"""``synthdp sample``: more rows from a saved model (post-processing of its release, no privacy cost)."""

from __future__ import annotations

from synthdp.cli.common import _pairs
from synthdp.core.errors import InputError
from synthdp.core.parameters import check
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.files.parquet import dump_table, require_pyarrow, table_format
from synthdp.linked.generation import is_linked_file
from synthdp.model import FittedModel


def run(args) -> int:
    """``synthdp sample MODEL -n N -o OUT [--condition COL=VALUE ...]``: fresh rows from a saved model, given the
    conditions when there are some (post-processing, docs/privacy.md §10.9)."""
    outputs = check_outputs({"-o": args.output}, inputs=[args.model])
    if table_format(args.output, "-o") == "parquet":
        require_pyarrow()
    try:
        check("n_rows", args.rows)
    except InputError as error:
        raise InputError(f"-n {args.rows}: {error}") from None
    conditions = _pairs(args.condition, "--condition", lambda text: text or None)
    if is_linked_file(args.model):
        raise InputError(f"{args.model!r} holds two linked tables' models (docs/privacy.md §12); draw from it in "
                         "Python: synthdp.Synthesizer.load(path).sample(n) gives n parents with their children")
    model = FittedModel.load(args.model)
    data = model.sample(args.rows, conditions=conditions, random_state=args.seed)
    write_outputs([(outputs["-o"], lambda tmp: dump_table(data, tmp, args.output, model.schema))])
    print(f"output: {args.output} ({len(data)} rows drawn from the model in {args.model}: post-processing of its "
          "release, no privacy cost)")
    return 0
