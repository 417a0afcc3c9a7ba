"""The quality report as one self-contained HTML page, its pictures drawn here as inline SVG.

No script, stylesheet, font or image is fetched: the page is one file that
opens anywhere, and it needs no plotting package (matplotlib is not used, so
the page looks the same with or without ``synthdp[plot]``).  On top it says
that it holds statistics of the real data, for the data owner only (see
:mod:`synthdp.quality`).  The page of two linked tables (:func:`render_linked`) holds the link's figures, then
each table's sections (:func:`table_sections`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from html import escape
from typing import Any, Callable, Sequence

import numpy as np

from synthdp.evaluation.figures import ColumnShape, Distribution, PairTable, QualityFigures
from synthdp.evaluation.links import ChildCounts, LinkedFigures, LinkFigures
from synthdp.evaluation.similarity import date_label

#: Colours of the two tables in every picture.
REAL, SYNTHETIC = "#4c72b0", "#dd8452"
#: Characters of a label drawn under a bar before it is cut.
LABEL_CHARS = 14
#: Rows (and columns) of a worst pair's table drawn on the page: the bins holding the largest shares, the rest as
#: one, so that two wide text columns draw two tables of at most 12 x 12 cells side by side (382 pixels wide each).
PAIR_TABLE_BINS = 12
#: The page's only styles, inline.
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
.owner{background:#fde8e8;border:2px solid #c0392b;padding:10px 14px;font-weight:600;color:#8e1b10}
.score{font-size:48px;font-weight:700;margin:8px 0}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}.num{text-align:right}
.grid{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0;border:1px solid #ddd;padding:8px;background:#fff;
max-width:100%;box-sizing:border-box;overflow-x:auto}
figcaption{font-weight:600;margin-bottom:4px}.note{color:#555;font-size:13px}
.warn li{color:#8a4b00}.key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px}
"""


def _number(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    """An inline SVG element of the given size (no namespace URL: the HTML parser gives inline SVG its own)."""
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{escape(label)}">{"".join(body)}</svg>')


def _legend(x: int, y: int) -> list[str]:
    return [f'<rect x="{x}" y="{y}" width="10" height="10" fill="{REAL}"/>',
            f'<text x="{x + 14}" y="{y + 9}" font-size="11">real</text>',
            f'<rect x="{x + 50}" y="{y}" width="10" height="10" fill="{SYNTHETIC}"/>',
            f'<text x="{x + 64}" y="{y + 9}" font-size="11">synthetic</text>']


def bars_svg(dist: Distribution, width: int = 400, height: int = 230) -> str:
    """Paired bars (real, synthetic) of the shares of each category."""
    left, top, bottom = 44, 20, 70
    plot_w, plot_h = width - left - 8, height - top - bottom
    top_share = max(max(dist.real, default=0), max(dist.synthetic, default=0)) or 1.0
    step = plot_w / max(len(dist.labels), 1)
    body = _axes(left, top, plot_w, plot_h, top_share) + _legend(width - 130, 4)
    for i, label in enumerate(dist.labels):
        x = left + i * step
        for j, (share, colour) in enumerate(((dist.real[i], REAL), (dist.synthetic[i], SYNTHETIC))):
            h = plot_h * share / top_share
            body.append(f'<rect x="{x + step * (0.1 + 0.4 * j):.1f}" y="{top + plot_h - h:.1f}" '
                        f'width="{step * 0.4:.1f}" height="{h:.1f}" fill="{colour}">'
                        f'<title>{escape(label)}: {"real" if j == 0 else "synthetic"} {_percent(share)}</title></rect>')
        cx, cy = x + step / 2, top + plot_h + 10
        body.append(f'<text x="{cx:.1f}" y="{cy}" font-size="10" text-anchor="end" '
                    f'transform="rotate(-40 {cx:.1f} {cy})">{escape(_short(label))}</text>')
    return _svg(width, height, body, f"bar chart of {dist.column}")


def histogram_svg(dist: Distribution, width: int = 400, height: int = 230) -> str:
    """The two histograms over shared bins, drawn over each other (half transparent)."""
    left, top, bottom = 44, 20, 40
    plot_w, plot_h = width - left - 8, height - top - bottom
    top_share = max(max(dist.real, default=0), max(dist.synthetic, default=0)) or 1.0
    step = plot_w / max(len(dist.real), 1)
    body = _axes(left, top, plot_w, plot_h, top_share) + _legend(width - 130, 4)
    for shares, colour in ((dist.real, REAL), (dist.synthetic, SYNTHETIC)):
        for i, share in enumerate(shares):
            h = plot_h * share / top_share
            body.append(f'<rect x="{left + i * step:.1f}" y="{top + plot_h - h:.1f}" width="{step:.1f}" '
                        f'height="{h:.1f}" fill="{colour}" fill-opacity="0.55"><title>from {escape(dist.labels[i])}: '
                        f'{_percent(share)}</title></rect>')
    ends = [dist.labels[0], _edge_label(dist)]
    for x, text, anchor in ((left, ends[0], "start"), (left + plot_w, ends[1], "end")):
        body.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" font-size="10" text-anchor="{anchor}">'
                    f'{escape(text)}</text>')
    return _svg(width, height, body, f"histogram of {dist.column}")


def _edge_label(dist: Distribution) -> str:
    """The label of the histogram's last edge (the column's largest value)."""
    last = dist.edges[-1]
    if dist.kind == "datetime":
        return date_label(last)
    return f"{last:.6g}"


def _axes(left: int, top: int, width: float, height: float, top_share: float) -> list[str]:
    return [f'<line x1="{left}" y1="{top + height}" x2="{left + width}" y2="{top + height}" stroke="#333"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + height}" stroke="#333"/>',
            f'<text x="{left - 4}" y="{top + 4}" font-size="10" text-anchor="end">{_percent(top_share)}</text>',
            f'<text x="{left - 4}" y="{top + height}" font-size="10" text-anchor="end">0%</text>']


def _mix(a: str, b: str, t: float) -> str:
    """The colour ``t`` of the way from ``a`` to ``b`` (hex)."""
    ca, cb = (tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in (a, b))
    return "#" + "".join(f"{round(x + (y - x) * min(max(t, 0.0), 1.0)):02x}" for x, y in zip(ca, cb))


def score_colour(score: float | None) -> str:
    """Red (0.5 and below) through yellow (0.75) to green (1)."""
    if score is None:
        return "#dddddd"
    t = (score - 0.5) / 0.5
    return _mix("#d73027", "#fee08b", 2 * t) if t < 0.5 else _mix("#fee08b", "#1a9850", 2 * t - 1)


def correlation_colour(r: float | None) -> str:
    """Blue (-1) through white (0) to red (1)."""
    if r is None:
        return "#dddddd"
    return _mix("#ffffff", "#b2182b", r) if r >= 0 else _mix("#ffffff", "#2166ac", -r)


def heatmap_svg(rows: Sequence[str], columns: Sequence[str], values: Sequence[Sequence[float | None]],
                colour: Callable[[float | None], str], label: str, *, marked: Sequence[tuple[int, int]] = (),
                text: Callable[[float | None], str] = lambda v: _number(v, 2), cell: int = 26) -> str:
    """A matrix of coloured cells with the row and column labels; ``marked`` cells get a thick outline."""
    left, top = 110, 90
    width, height = left + cell * len(columns) + 8, top + cell * len(rows) + 8
    body = []
    for j, name in enumerate(columns):
        cx = left + cell * j + cell / 2
        body.append(f'<text x="{cx:.1f}" y="{top - 6}" font-size="10" transform="rotate(-50 {cx:.1f} {top - 6})">'
                    f'{escape(_short(name))}</text>')
    for i, name in enumerate(rows):
        y = top + cell * i
        body.append(f'<text x="{left - 4}" y="{y + cell / 2 + 3:.1f}" font-size="10" text-anchor="end">'
                    f'{escape(_short(name))}</text>')
        for j, value in enumerate(values[i]):
            body.append(f'<rect x="{left + cell * j}" y="{y}" width="{cell}" height="{cell}" fill="{colour(value)}" '
                        f'stroke="#fff"><title>{escape(name)} / {escape(columns[j])}: {text(value)}</title></rect>')
    for i, j in marked:
        body.append(f'<rect x="{left + cell * j + 1}" y="{top + cell * i + 1}" width="{cell - 2}" height="{cell - 2}" '
                    'fill="none" stroke="#000" stroke-width="2.5"/>')
    return _svg(width, height, body, label)


def _pair_matrix(report: QualityFigures) -> str:
    """The pair-trend scores as a symmetric heatmap, the worst pairs outlined."""
    names = [s.column for s in report.shapes]
    index = {n: i for i, n in enumerate(names)}
    matrix: list[list[float | None]] = [[None] * len(names) for _ in names]
    for trend in report.trends:
        i, j = index[trend.columns[0]], index[trend.columns[1]]
        matrix[i][j] = matrix[j][i] = trend.score
    marked = [(index[p.columns[0]], index[p.columns[1]]) for p in report.worst_pairs]
    marked += [(j, i) for i, j in marked]
    return heatmap_svg(names, names, matrix, score_colour, "pair trend scores", marked=marked)


def _kept_bins(real: np.ndarray, synthetic: np.ndarray, limit: int) -> np.ndarray:
    """Each bin's row in the folded table: the ``limit - 1`` bins with the largest share of either table keep
    their order, the others share the last row; all bins keep their own row when there are at most ``limit``."""
    if len(real) <= limit:
        return np.arange(len(real))
    kept = np.sort(np.argsort(-np.maximum(real, synthetic), kind="stable")[:limit - 1])
    rows = np.full(len(real), limit - 1)
    rows[kept] = np.arange(limit - 1)
    return rows


def _fold_labels(labels: Sequence[str], rows: np.ndarray) -> tuple[str, ...]:
    """The labels of the folded table's rows (:func:`_kept_bins`): the kept ones, then ``(N others)``."""
    if len(rows) == len(set(rows.tolist())):
        return tuple(labels)
    rest = int((rows == rows.max()).sum())
    return tuple(label for label, row in zip(labels, rows) if row < rows.max()) + (f"({rest} others)",)


def fold_pair_table(table: PairTable, limit: int = PAIR_TABLE_BINS) -> PairTable:
    """The pair's table with at most ``limit`` rows and columns (:func:`_kept_bins` on each side's shares of
    either table), the shares of the bins folded together summed: a table of two text columns of 50
    categories each is 2,500 cells, mostly empty, and runs off the page."""
    real, synthetic = np.asarray(table.real, dtype=float), np.asarray(table.synthetic, dtype=float)
    rows = _kept_bins(real.sum(axis=1), synthetic.sum(axis=1), limit)
    columns = _kept_bins(real.sum(axis=0), synthetic.sum(axis=0), limit)

    def fold(shares: np.ndarray) -> tuple[tuple[float, ...], ...]:
        out = np.zeros((rows.max() + 1, columns.max() + 1))
        np.add.at(out, (rows[:, None], columns[None, :]), shares)
        return tuple(map(tuple, out.tolist()))

    return replace(table, row_labels=_fold_labels(table.row_labels, rows),
                   column_labels=_fold_labels(table.column_labels, columns), real=fold(real),
                   synthetic=fold(synthetic))


def _share_heatmap(table: PairTable, side: str, top: float) -> str:
    values = getattr(table, side)
    return heatmap_svg(table.row_labels, table.column_labels, values,
                       lambda v: _mix("#ffffff", "#08306b", (v or 0.0) / top), f"{side} table of {table.columns}",
                       text=lambda v: _percent(v or 0.0), cell=22)


def _column_figure(dist: Distribution, shape: ColumnShape) -> str:
    picture = histogram_svg(dist) if dist.edges else bars_svg(dist)
    return (f'<figure class="column" data-column="{escape(dist.column)}"><figcaption>{escape(dist.column)} '
            f'<span class="note">({dist.kind}; column score {shape.column_score:.3f}; {shape.metric} '
            f'{shape.score:.3f})</span></figcaption>{picture}'
            f'<div class="note">missing: real {_percent(dist.real_missing)}, synthetic '
            f'{_percent(dist.synthetic_missing)}</div></figure>')


def _rows(cells: list[list[Any]], header: list[str]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td{" class=num" if isinstance(c, (int, float)) else ""}>'
                                    f"{escape(_number(c, 3) if isinstance(c, float) else str(c))}</td>" for c in row)
                   + "</tr>" for row in cells)
    return f"<table><tr>{head}</tr>{body}</table>"


def _release_line(release: dict[str, Any]) -> str:
    """The release in one sentence: budget spent, method, queries, rows."""
    delta = (f", delta {release.get('delta_spent')} of {release.get('delta_budget')}"
             if release.get("delta_budget") is not None else " (pure DP)")
    return escape(f"Release: epsilon {release.get('epsilon_spent')} of {release.get('epsilon_budget')} spent{delta}; "
                  f"method {release.get('method')}; queries {release.get('query_class')}; "
                  f"{release.get('rows_written')} rows written; {len(release.get('measurements') or [])} measurements")


def _release(release: dict[str, Any]) -> str:
    """The release's summary and the plan's choices with their reasons (what the run chose or learned privately)."""
    lines = [f"<p>{_release_line(release)}.</p>"]
    plan = [[name, json.dumps(entry.get("value"))[:120], entry.get("reason", "")]
            for name, entry in (release.get("plan") or {}).items() if isinstance(entry, dict)]
    if plan:
        lines.append("<p>What the run chose or learned privately (the release's plan):</p>"
                     + _rows(plan, ["choice", "value", "reason"]))
    if release.get("warnings"):
        lines.append("<p>Release warnings:</p><ul>" + "".join(f"<li>{escape(w)}</li>" for w in release["warnings"])
                     + "</ul>")
    return "".join(lines)


def _warning_list(warnings: Sequence[str]) -> str:
    return ('<ul class="warn">' + "".join(f"<li>{escape(w)}</li>" for w in warnings) + "</ul>" if warnings
            else "<p>None.</p>")


def _page(title: str, mark: str, published: str, body: list[str]) -> str:
    """A whole page of ``body``'s sections, opening and ending with the owner-only notice ``mark`` (which says to
    publish only ``published``)."""
    return "\n".join([f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>",
                      f"<style>{_STYLE}</style></head><body>",
                      f'<p class="owner">{escape(mark)}. Keep it with the real data; publish only '
                      f"{escape(published)}.</p>", *body, f'<p class="owner">{escape(mark)}.</p></body></html>'])


def render(report: QualityFigures, *, mark: str) -> str:
    """The whole page (module docstring); ``mark`` is the owner-only notice it opens and ends with."""
    return _page("synthdp quality report", mark, "the synthetic table and its release",
                 ["<h1>Quality of the synthetic table</h1>", *table_sections(report)])


def table_sections(report: QualityFigures, *, level: int = 2, anchor: str = "") -> list[str]:
    """One table's sections: its score, warnings, columns, pairs, correlations, point masses and release, their
    headings at ``level`` and their ids prefixed with ``anchor`` (a page of two tables holds two of each)."""
    h, sub = f"h{level}", f"h{level + 1}"
    parts, in_score = report.parts(), report.score_parts()
    out = [f'<div class="score" id="{anchor}score">{report.score:.1f} / 100</div>',
           f"<p>{report.n_real} real rows, {report.n_synthetic} synthetic rows, {len(report.shapes)} columns. "
           "The score is the mean of the parts marked below: the mean column score, the mean of the worst tenth "
           "of them, and the same two of the pair trends. A column's score is the lowest of its shape, values, "
           "support and missing scores, and 0 when it came back constant.</p>",
           _rows([[k, _number(v), "in the score" if k in in_score else "shown beside"] for k, v in parts.items()],
                 ["part", "score (0-100)", ""])]
    if report.release is not None:
        out.append(f"<p>{_release_line(report.release)} (details at the end of the page)</p>")
    out.append(f"<{h}>Warnings</{h}>" + _warning_list(report.warnings))
    if report.efficacy is not None:
        e = report.efficacy
        out.append(f"<{h}>ML efficacy: predicting {escape(e.target)}</{h}>" + _rows(
            [["trained on synthetic", e.synthetic], ["trained on real (train split)", e.real],
             ["baseline" + (" (majority class)" if e.task == "classification" else " (the mean)"), e.baseline]],
            ["model", f"{e.metric} on {e.test_rows} real test rows"]))
    if report.worst_case is not None:
        w = report.worst_case
        value = (f"{w.error:.4f} (proven optimal)" if w.certified
                 else f"between {w.lower:.4f} and {w.upper:.4f} (optimum NOT proven within the time limit)")
        out.append(f"<{h}>Certified worst case over {escape(w.query_class)}</{h}><p>Largest "
                   f"|q(real) - q(synthetic)|: {escape(value)}.</p>")
        if w.query is not None:
            out.append(f"<p>{'Worst' if w.certified else 'Worst found'} query: <code>{escape(w.text or '')}</code>; "
                       f"real {w.real_answer:.4f}, synthetic {w.synthetic_answer:.4f}.</p>")
    out.append(f'<{h}>Columns</{h}><p class="key"><span style="background:{REAL}"></span>real'
               f'<span style="background:{SYNTHETIC}"></span>synthetic</p><div class="grid">')
    out.extend(_column_figure(d, s) for d, s in zip(report.distributions, report.shapes))
    out.append("</div>" + _rows([[s.column, s.kind, s.column_score, s.metric, s.score, s.values, s.support,
                                  s.real_missing, s.synthetic_missing, "yes" if s.constant else ""]
                                 for s in report.shapes],
                                ["column", "kind", "column score", "metric", "shape score", "values", "support",
                                 "real missing", "synthetic missing", "came back constant"]))
    if report.trends:
        out.append(f"<{h}>Pair trends</{h}><p class=note>Green: the pair relates as in the real data; red: it does "
                   "not. Outlined: the worst pairs, drawn below.</p>"
                   f'<figure id="{anchor}pair-matrix">{_pair_matrix(report)}</figure>')
        for table in map(fold_pair_table, report.worst_pairs):
            top = max(max(map(max, table.real)), max(map(max, table.synthetic))) or 1.0
            score = next(t for t in report.trends if t.columns == table.columns)
            out.append(f"<{sub}>{escape(table.columns[0])} x {escape(table.columns[1])} ({score.metric} "
                       f"{score.score:.3f})</{sub}><div class=grid>"
                       f"<figure><figcaption>real</figcaption>{_share_heatmap(table, 'real', top)}</figure>"
                       f"<figure><figcaption>synthetic</figcaption>{_share_heatmap(table, 'synthetic', top)}</figure>"
                       "</div>")
    if report.correlations:
        names = report.correlations["names"]
        out.append(f'<{h}>Correlations (Pearson)</{h}><div class="grid">' + "".join(
            f"<figure><figcaption>{side}</figcaption>"
            f"{heatmap_svg(names, names, report.correlations[side], correlation_colour, f'{side} correlations')}"
            "</figure>" for side in ("real", "synthetic")) + "</div>")
    out.append(f"<{h}>Point masses</{h}><p class=note>The most frequent exact values of each table.</p>" + _rows(
        [[m.column, m.value, _percent(m.real), _percent(m.synthetic)] for m in report.point_masses],
        ["column", "value", "real", "synthetic"]))
    if report.release is not None:
        out.append(f"<{h}>The release</{h}>" + _release(report.release))
    return out


#: Parent x child pairs listed in the link's table (the strongest real associations).
LINKED_PAIR_ROWS = 10


def _keys_table(link: LinkFigures) -> str:
    """The key check of both pairs, the synthetic one first (the real one's orphans the release drops)."""
    rows = [[side, "yes" if c.holds else "NO", c.children, c.broken, ", ".join(c.examples), c.duplicate_keys,
             c.missing_keys] for side, c in sorted(link.integrity.items(), key=lambda item: item[0] != "synthetic")]
    return _rows(rows, ["pair", "every child's key is one parent's", f"{link.link.child} rows",
                        "matching no parent", "e.g.", "parent keys held by several rows", "parent rows without a key"])


def _children_section(counts: ChildCounts, child: str, parent: str, sub: str) -> str:
    """Children per parent: the real and synthetic bars, every count's shares, and the distances."""
    picture = bars_svg(Distribution(f"{child} per {parent}", "categorical", counts.labels, counts.real,
                                    counts.synthetic))
    bounded = counts.bounded or (None,) * len(counts.labels)
    header = ["children", "real", *([f"real, at most {counts.k} kept"] if counts.bounded else []), "synthetic"]
    shares = [[label, _percent(r), *([_percent(b)] if counts.bounded else []), _percent(s)]
              for label, r, b, s in zip(counts.labels, counts.real, bounded, counts.synthetic)]
    distances = [["real pair (every child)", counts.tvd]] + (
        [[f"real pair bounded to {counts.k} children, as the release bounds it", counts.bounded_tvd]]
        if counts.bounded_tvd is not None else [])
    why = (" Against the real pair bounded as the release bounds it, the distance is the model's alone; against "
           "the real pair it also counts the children bounding cut." if counts.bounded else "")
    return (f"<{sub}>Children per parent: {escape(child)} rows per {escape(parent)} row</{sub}><p class=note>"
            f"Mean {counts.real_mean:.2f} real, {counts.synthetic_mean:.2f} synthetic.{why}</p>"
            f'<div class="grid"><figure class="link" id="children-per-parent"><figcaption>share of {escape(parent)} '
            f"by number of {escape(child)}</figcaption>{picture}</figure>{_rows(shares, header)}</div>"
            + _rows(distances, ["synthetic children per parent against", "TVD"]))


def _pairs_section(link: LinkFigures, sub: str) -> str:
    """The parent x child pairs with the strongest real association, and the strongest ones' tables."""
    if not link.pairs:
        return f"<{sub}>Parent x child pairs</{sub}><p>None: a pair has no child row with a parent.</p>"
    out = [f"<{sub}>Parent x child pairs</{sub}><p class=note>Each child row beside its parent's columns; the pairs "
           "with the strongest real association (Cramér's V of the binned two-way table: numbers cut at the real "
           "deciles), and the total variation distance between the real and the synthetic tables.</p>"
           + _rows([[p.parent_column, p.child_column, p.real_association, p.synthetic_association, p.tvd]
                    for p in link.pairs[:LINKED_PAIR_ROWS]],
                   ["parent column", "child column", "real V", "synthetic V", "TVD"])]
    for table in map(fold_pair_table, link.tables):
        top = max(max(map(max, table.real)), max(map(max, table.synthetic))) or 1.0
        out.append(f'<div class="grid pair">'
                   f"<figure><figcaption>{escape(' x '.join(table.columns))}, real</figcaption>"
                   f"{_share_heatmap(table, 'real', top)}</figure><figure><figcaption>synthetic</figcaption>"
                   f"{_share_heatmap(table, 'synthetic', top)}</figure></div>")
    return "".join(out)


def _linked_release_line(release: dict[str, Any]) -> str:
    """The linked release in one sentence: budget spent, the unit and ``k``."""
    delta = (f", delta {release.get('delta_spent')} of {release.get('delta_budget')}"
             if release.get("delta_budget") is not None else " (pure DP)")
    return escape(f"Release of two linked tables: epsilon {release.get('epsilon_spent')} of "
                  f"{release.get('epsilon_budget')} spent{delta}; privacy unit {release.get('privacy_unit')}, at most "
                  f"{release.get('max_rows_per_unit')} child rows each")


def render_linked(report: LinkedFigures, *, mark: str) -> str:
    """The page of two linked tables: the link's figures, then each table's sections (:func:`table_sections`)."""
    link = report.link.link
    out = ["<h1>Quality of the two synthetic tables</h1>",
           f"<p>{escape(link.describe())}. Each table is compared below without its key columns (identifiers, "
           "written fresh by the release).</p>"
           + _rows([[name, t.n_real, t.n_synthetic, _number(t.score)] for name, t in report.tables.items()],
                   ["table", "real rows", "synthetic rows", "score (0-100)"])]
    if report.release is not None:
        out.append(f"<p>{_linked_release_line(report.release)} (details at the end of the page)</p>")
    out += [f"<h2>Warnings</h2>{_warning_list(report.warnings)}", f"<h2>The link</h2><h3>Keys</h3>"
            f'<div id="integrity">{_keys_table(report.link)}</div>',
            _children_section(report.link.counts, link.child, link.parent, "h3"), _pairs_section(report.link, "h3")]
    for name, table in report.tables.items():
        out += [f"<h2>Table {escape(name)}</h2>", *table_sections(table, level=3, anchor=f"{name}-")]
    if report.release is not None:
        out.append("<h2>The release</h2>" + "".join(f"<h3>The {view} view</h3>{_release(release)}"
                                                   for view, release in report.release.get("views", {}).items()))
    return _page("synthdp quality report: two tables", mark, "the synthetic tables and their release", out)
