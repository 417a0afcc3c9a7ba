"""Files in and out: CSV and Parquet tables, sources of several files, and outputs written as one unit.

* :mod:`synthdp.files.csvfile`: reading a user's CSV with clear errors; atomic CSV/JSON writes.
* :mod:`synthdp.files.parquet`: the Parquet counterpart (pyarrow is an optional extra).
* :mod:`synthdp.files.sources`: a table given as one file, a glob, a directory or a list.
* :mod:`synthdp.files.outputs`: output paths checked before any private step, then written all or none.

The file layer sits beside :mod:`synthdp.core` (it needs only its errors and extras).
"""
