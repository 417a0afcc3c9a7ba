"""``synthdp schema``: a draft schema read off a table, for the data owner to review."""

from __future__ import annotations

from synthdp.cli.common import read_input, schema_kwargs
from synthdp.core.draft import DRAFT_KEY, draft_document
from synthdp.files import csvfile
from synthdp.files.outputs import check_outputs, write_outputs


def run(args) -> int:
    """Draft a schema from a CSV for the data owner to review (nothing private is released)."""
    outputs = check_outputs({"-o": args.output}, inputs=[args.input])
    df = read_input(args.input, args, typed=True)  # the draft reads types off the data, for the owner's review
    kw = schema_kwargs(args)
    draft = draft_document(df, categorical=kw["categorical"], bounds=kw["bounds"], bins=kw["bins"], cuts=kw["cuts"],
                           datetimes=kw["datetimes"], learn_bounds=kw["learn_bounds"], decimals=kw["decimals"],
                           dtypes=kw["dtypes"], discretise=kw["discretise"], nullable=kw["nullable"], clip=kw["clip"],
                           max_categories=kw["max_categories"], missing_values=args.missing or (),
                           learn_categories=args.learn_categories, other=kw["other"])
    write_outputs([(outputs["-o"], lambda tmp: csvfile.dump_json(draft, tmp))])
    if DRAFT_KEY not in draft:
        print(f"schema: {args.output} ({len(draft['attributes'])} columns); nothing was read off the data: ready "
              "for generate --schema")
        return 0
    print(f"draft schema: {args.output} ({len(draft['attributes'])} columns)")
    for entry in draft[DRAFT_KEY]:
        print(f"  read off the data, review: {entry['column']}: {', '.join(entry['read'])}")
    print(f"replace what was read off the data with public values (a code book, legal ranges), then delete the "
          f"{DRAFT_KEY!r} entry; synthdp refuses the draft until then")
    return 0
