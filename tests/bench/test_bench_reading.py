"""``synthdp bench reading``: the three readers of a stacked raw Adult file give one table, and a small run."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from synthdp.bench import reading
from synthdp.core.encoding import Encoder
from synthdp.datasets import adult_raw_schema


def test_the_readers_give_one_table(tmp_path, shared_data_dir):
    """Raw Adult twice over: synthdp's reader (pyarrow's parser) and pandas' text parser give equal frames, Arrow
    strings, and all three readers the same codes, numbers parsed in the read or in encoding."""
    path = reading.stacked_adult(tmp_path, 2)
    frames = {reader: reading.read(path, reader) for reader in reading.READERS}
    pd.testing.assert_frame_equal(frames["text"], frames["text-pandas"], check_exact=True)
    assert all(isinstance(frames["text"][c].dtype, pd.StringDtype) for c in frames["text"].columns)
    assert frames["inferred"]["age"].dtype == np.int64 and len(frames["inferred"]) == 2 * 32_561
    encoder = Encoder(adult_raw_schema())
    codes = {reader: encoder.encode(df) for reader, df in frames.items()}
    np.testing.assert_array_equal(codes["text"], codes["inferred"])
    np.testing.assert_array_equal(codes["text-pandas"], codes["inferred"])


def test_small_run_writes_its_table(tmp_path, capsys, shared_data_dir):
    out = reading.run(["--copies", "1", "--repeats", "1", "--out", str(tmp_path)])
    assert set(out["best"]) == {f"{reader} {mode}" for reader in reading.READERS for mode in reading.MODES}
    assert out["rows"] == 32_561 and out["best"]["inferred read"]["cpu_ratio"] == 1.0
    assert all(e["cpu_seconds"] > 0 and e["seconds"] > 0 for e in out["best"].values())
    assert json.loads((tmp_path / "reading.json").read_text())["copies"] == 1
    assert "CPU x" in capsys.readouterr().out
