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

#: A value that ``str.strip()`` changes begins or ends with a byte outside ``[_FIRST_KEPT, 0x7e]``: an ASCII
#: character ``str.isspace`` counts (tab, line ends, the separators ``\x1c``-``\x1f``, space; all at most 0x20)
#: or a byte of a UTF-8 character beyond ASCII (0x80 or more; some are spaces: ``\x85``, ``\xa0``, ``\u3000``...).
_FIRST_KEPT = 0x21


def arrow_text(series: pd.Series) -> Any:
    """The column's values as Arrow's chunked array of strings, when pandas holds them so (its pyarrow-backed text
    dtype), else ``None``."""
    if not (isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "pyarrow"):
        return None
    import pyarrow as pa

    values = pa.array(series.array)
    return values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])


def may_strip(text: Any) -> bool:
    """Whether ``str.strip()`` may change a value of ``text`` (an Arrow chunked array of strings): ``False`` only
    when no value's first or last byte is outside the printable ASCII range (:data:`_FIRST_KEPT` to 0x7e).

    Read off each chunk's offsets and bytes, with no string made: every slot's byte at its start offset and the
    byte before its end offset, among the chunk's own bytes (an index past them is moved to the nearest). A
    value's two are its first and last; an empty value's are another value's last and first (or the nearest of
    the chunk's bytes), and a missing value's are those of its bytes or, when it has none, of another value: so
    the answer is ``True`` exactly when some value's first or last byte is outside the range (a missing value
    with bytes of its own may add to these).
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
        if data.size and (_outside_kept(np.take(data, offsets[:-1] - offsets[0], mode="clip"))
                          or _outside_kept(np.take(data, offsets[1:] - offsets[0] - 1, mode="clip"))):
            return True
    return False



def _outside_kept(edges: np.ndarray) -> bool:
    """Whether a byte of ``edges`` (uint8) is below :data:`_FIRST_KEPT` or 0x7f and above: shifted down by
    ``_FIRST_KEPT`` (wrapping), the bytes kept are exactly those at most ``0x7e - _FIRST_KEPT``."""
    return bool(((edges - np.uint8(_FIRST_KEPT)) > 0x7E - _FIRST_KEPT).any())
