"""Text columns that pandas holds in Arrow arrays, inspected through Arrow's buffers instead of Python strings.

synthdp's CSV readers give every field as text (docs/privacy.md §10.1), which pandas holds in Arrow arrays
from pandas 3 on. Some questions about such a column have answers that need no Python string per value; the
functions here answer them from the array's bytes, and say ``None`` or ``True`` (ask the values) where they
cannot vouch for the answer, so that a caller's result never differs from the one its values give.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["arrow_text", "may_strip"]

#: The printable ASCII bytes, ``!`` to ``~``. A value that ``str.strip()`` changes begins or ends with a byte
#: outside them: an ASCII character ``str.isspace`` counts (tab, line ends, the separators ``\x1c``-``\x1f``,
#: space: all below ``!``) or a byte of a UTF-8 character beyond ASCII (0x80 or more; some of these characters are
#: spaces: ``\x85``, ``\xa0``, ``\u3000``...).
PRINTABLE = (0x21, 0x7E)


def arrow_text(series: pd.Series) -> Any:
    """The column's values as Arrow's chunked array of strings, when pandas holds them so (its pyarrow-backed text
    dtype), else ``None``."""
    if not (isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow"):
        return None
    import pyarrow as pa

    values = pa.array(series.array)
    return values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])


def may_strip(text: Any) -> bool:
    """Whether ``str.strip()`` may change a value of ``text`` (an Arrow chunked array of strings): ``False`` exactly
    when every value begins and ends with a :data:`PRINTABLE` byte.

    Read off each chunk's offsets and bytes, with no string made: for every slot, the byte at its start offset and
    the one before its end offset, within the chunk's own bytes (an index beyond them moves to the nearest). For a
    value these are its first and last bytes; for an empty value they are bytes of other values, looked at anyway.
    A missing value with bytes of its own (Arrow allows them) can only add a ``True``.
    """
    import pyarrow as pa

    if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)):
        return True
    width = np.int64 if pa.types.is_large_string(text.type) else np.int32
    for chunk in text.chunks:
        buffers = chunk.buffers()
        if len(chunk) == 0 or buffers[2] is None:
            continue
        offsets = np.frombuffer(buffers[1], dtype=width)[chunk.offset: chunk.offset + len(chunk) + 1]
        data = np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0]: offsets[-1]]  # the chunk's own values
        if data.size and (_unprintable(np.take(data, offsets[:-1] - offsets[0], mode="clip"))
                          or _unprintable(np.take(data, offsets[1:] - offsets[0] - 1, mode="clip"))):
            return True
    return False


def _unprintable(edges: np.ndarray) -> bool:
    """Whether a byte of ``edges`` (uint8) is outside :data:`PRINTABLE`: shifted down by the first printable byte (with
    wrapping), the printable bytes are exactly those at most its width."""
    first, last = PRINTABLE
    return bool(((edges - np.uint8(first)) > last - first).any())
