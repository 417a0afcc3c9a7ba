"""``synthdp bench width``: the generated tree-structured tables and one small run end to end."""

from __future__ import annotations

import json

import numpy as np

from synthdp.bench import width


def test_tree_table_is_seeded_coded_and_follows_its_tree():
    df, schema, parents = width.tree_table(12, 4000, seed=3)
    again, _, same_parents = width.tree_table(12, 4000, seed=3)
    assert df.equals(again) and parents == same_parents
    assert parents[0] is None and all(0 <= p < j for j, p in enumerate(parents) if j)
    sizes = np.array(schema.domain.sizes)
    assert df.shape == (4000, 12) and ((df.to_numpy() >= 0) & (df.to_numpy() < sizes)).all()
    assert ((width.MIN_SIZE <= sizes) & (sizes <= width.MAX_SIZE)).all()
    # each column depends on its parent: its distribution given the parent's values is not the same for all
    j = 5
    p = parents[j]
    given = [np.bincount(df.iloc[:, j][df.iloc[:, p] == v], minlength=sizes[j]) for v in range(sizes[p])]
    shares = [g / g.sum() for g in given if g.sum() > 100]
    assert max(np.abs(a - b).max() for a in shares for b in shares) > 0.1


def test_small_run_writes_its_table(tmp_path, capsys):
    out = width.run(["--columns", "6", "--rows", "500", "--output", str(tmp_path)])
    (record,) = out["records"]
    assert "error" not in record and record["columns"] == 6 and record["method"] == "measure"
    assert 0 <= record["max_error_2way"] <= 1 and record["peak_bytes"] > 0
    assert json.loads((tmp_path / "width-seed0.json").read_text())["records"][0]["rows"] == 500
    assert "max err (all 2-way)" in capsys.readouterr().out
