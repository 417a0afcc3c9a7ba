"""The public schema of a run: the one given (with the options' additions) or built from the rows in memory.

No private step reads a derived column, so the rows leave them behind here
(docs/privacy.md §10.10); a privacy unit's column is never in the schema (§10.6).
"""

from __future__ import annotations

from dataclasses import replace

from synthdp.config import SynthesisConfig
from synthdp.core.derived import parse_derived
from synthdp.core.encoding import check_derived_output
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema, resolve_schema
from synthdp.engines import CountingEngine, Rows

__all__ = ["public_schema"]


def public_schema(rows: Rows, config: SynthesisConfig, collected: list[str], engine: CountingEngine
                  ) -> tuple[Rows, Schema]:
    """``(rows, schema)``: the public schema of the run, and the rows without its derived columns.

    An engine that reads the rows where it counts (on a cluster, part by part: no frame here) says it needs a
    public schema (``engine.needs_public_schema``).
    Refuses a privacy unit column inside the schema (docs/privacy.md §10.6).  Derived columns (``config.derived``,
    added to a given schema's) are dropped from the rows: no private step reads them (docs/privacy.md §10.10).
    """
    if engine.needs_public_schema and config.schema is None:
        raise InputError(f"engine={engine.name!r} needs a public schema (schema= a Schema or a schema file; CLI "
                         "--schema): the categories of a column are never read off the data on workers")
    schema = resolve_schema(rows.frame, config.schema, collected, **config.schema_options())
    if config.missing and config.schema is not None:
        schema = replace(schema, missing_values=tuple(dict.fromkeys((*schema.missing_values, *config.missing))))
    if config.derived and config.schema is not None:
        schema = replace(schema, derived=(*schema.derived, *parse_derived(config.derived)))
    check_derived_output(schema, config.numeric)
    if schema.derived and rows.frame is not None:  # derived columns never reach the model (docs/privacy.md §10.10)
        derived = {d.name for d in schema.derived}
        rows = replace(rows, source=rows.frame.drop(columns=[c for c in rows.frame.columns if str(c) in derived]))
    if config.privacy_unit is not None and config.privacy_unit in schema.names:
        raise InputError(f"the privacy unit column {config.privacy_unit!r} must not be in the schema: it is never "
                         "encoded, modelled or released (docs/privacy.md §10.6); remove it from the schema")
    return rows, schema
