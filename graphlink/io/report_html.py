"""The release report as one self-contained HTML file (docs/report.md).

No external asset: the CSS is inline, the charts are inline SVG drawn here, there is no script; the file opens
offline and prints to PDF from a browser (print CSS keeps sections and tables whole).  Every value that comes
from the data (element and location names, the release name, paths, options) goes through :func:`html.escape`.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from graphlink.report.release import ReleaseReport

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;max-width:980px;
margin:2rem auto;padding:0 1rem;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem;
margin-top:2rem}
.lead{font-size:1.05rem}.muted{color:#57606a;font-size:.9rem}
.cards{display:flex;flex-wrap:wrap;gap:.8rem;margin:1rem 0}
.card{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .9rem;min-width:12rem;flex:1}
.card .n{font-size:1.6rem;font-weight:600}.bad{color:#b42318}.good{color:#1a7f37}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:right}th{background:#f6f8fa}
td.t,th.t{text-align:left}code{background:#f6f8fa;padding:.1rem .3rem;border-radius:4px;font-size:.85rem;
word-break:break-all}
svg{max-width:100%;height:auto}
section,table,svg,.cards{break-inside:avoid;page-break-inside:avoid}
@media print{body{margin:0;max-width:none}h2{break-after:avoid;page-break-after:avoid}a{color:inherit}}
"""


def _n(value: int) -> str:
    return f"{value:,}"


def bar_chart(labels: Sequence[str], values: Sequence[int], *, title: str, x_label: str, y_label: str,
              highlight: Sequence[bool] | None = None, width: int = 760, height: int = 260) -> str:
    """A vertical bar chart as inline SVG (labels escaped).  O(bars)."""
    n = max(len(values), 1)
    top = max(max(values, default=0), 1)
    left, bottom, right, head = 56, 46, 12, 24
    plot_w, plot_h = width - left - right, height - bottom - head
    step = plot_w / n
    bw = max(step * 0.7, 1.0)
    parts = [f'<svg viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{escape(title)}"><title>{escape(title)}</title>',
             f'<line x1="{left}" y1="{head + plot_h}" x2="{width - right}" y2="{head + plot_h}" stroke="#57606a"/>',
             f'<line x1="{left}" y1="{head}" x2="{left}" y2="{head + plot_h}" stroke="#57606a"/>']
    for frac in (0.0, 0.5, 1.0):
        y = head + plot_h - frac * plot_h
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
                     f'{escape(_n(round(top * frac)))}</text>')
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        h = plot_h * value / top
        x = left + i * step + (step - bw) / 2
        colour = "#b42318" if highlight is not None and highlight[i] else "#0969da"
        parts.append(f'<rect x="{x:.1f}" y="{head + plot_h - h:.1f}" width="{bw:.1f}" height="{h:.1f}" '
                     f'fill="{colour}"><title>{escape(str(label))}: {escape(_n(value))}</title></rect>')
        if value:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{head + plot_h - h - 3:.1f}" font-size="10" '
                         f'text-anchor="middle">{escape(_n(value))}</text>')
        if n <= 40 or i % max(n // 20, 1) == 0:
            short = str(label) if len(str(label)) <= 12 else str(label)[:11] + "…"
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{head + plot_h + 14}" font-size="10" '
                         f'text-anchor="middle">{escape(short)}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" font-size="12" text-anchor="middle">'
                 f'{escape(x_label)}</text>')
    parts.append(f'<text x="14" y="{head + plot_h / 2:.1f}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 14 {head + plot_h / 2:.1f})">{escape(y_label)}</text></svg>')
    return "".join(parts)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], text_cols: int = 1) -> str:
    th = "".join(f'<th class="t">{escape(h)}</th>' if i < text_cols else f"<th>{escape(h)}</th>"
                 for i, h in enumerate(header))
    body = []
    for row in rows:
        cells = []
        for i, v in enumerate(row):
            text = _n(v) if isinstance(v, int) and not isinstance(v, bool) else str(v)
            cells.append(f'<td class="t">{escape(text)}</td>' if i < text_cols else f"<td>{escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _summary(r: ReleaseReport) -> str:
    verdict_class = "good" if r.k_unlinkable else "bad"
    return f"""<section id="summary">
<p class="lead">This release names <b>{_n(r.people)}</b> people and holds <b>{_n(r.records)}</b> de-identified
records at <b>{_n(r.locations)}</b> locations.</p>
<div class="cards">
<div class="card"><div class="n {'bad' if r.certain else 'good'}">{_n(r.certain)}</div>people can be
re-identified with certainty from where their records appear</div>
<div class="card"><div class="n {'bad' if r.below_k else 'good'}">{_n(r.below_k)}</div>people have fewer than
{r.k} candidate records (at least one)</div>
<div class="card"><div class="n">{_n(r.no_candidate)}</div>people match no de-identified record at all</div>
</div>
<p class="lead {verdict_class}"><b>Verdict for k = {r.k}:</b> {escape(r.verdict)}</p>
<h2>Data model assumed</h2>
<p>{escape(r.model.plain)}</p>
<p>{escape(r.model.would_change)}</p>
<p class="muted">Technical reading: {escape(r.model.label)} — {escape(r.model.reason)}</p>
</section>"""


def _risk(r: ReleaseReport) -> str:
    labels = [f"{b.candidates}+" if b.more else str(b.candidates) for b in r.histogram]
    values = [b.people for b in r.histogram]
    high = [b.candidates < r.k and not b.more for b in r.histogram]
    chart = bar_chart(labels, values, title="People by number of candidate records",
                      x_label="candidate records (1 = certainly re-identified)", y_label="people", highlight=high)
    return f"""<section id="risk"><h2>Risk: people by number of candidates</h2>
<p>A person's candidates are the de-identified records (or "not in the de-identified data") that could be theirs
in some consistent reading of the release. One candidate means certain re-identification; a person with c
candidates is re-identified with probability 1/c by someone who guesses. Bars in red are below k = {r.k}.</p>
{chart}</section>"""


def _exposure(r: ReleaseReport) -> str:
    if r.exposure_note is not None:
        return (f'<section id="exposure"><h2>Exposure per location</h2><p>Not shown: '
                f"{escape(r.exposure_note)}.</p></section>")
    rows = sorted(r.exposure, key=lambda e: (-e.lost, e.location))
    shown = rows[:40]
    chart = bar_chart([e.location for e in shown], [e.lost for e in shown],
                      title="Certain re-identifications that disappear if the location withholds its table",
                      x_label="location (most exposing first)", y_label="certain re-identifications removed")
    table = _table(["location", "identified records", "de-identified records", "certain if withheld",
                    "certain removed"],
                   [(e.location, e.identified, e.deidentified, e.certain_after, e.lost) for e in rows])
    more = f"<p class='muted'>The chart shows the first 40 of {len(rows)} locations.</p>" if len(rows) > 40 else ""
    return f"""<section id="exposure"><h2>Exposure per location</h2>
<p>How many of the {_n(r.certain)} certain re-identifications disappear if one location withholds its whole
de-identified table (each location on its own, everything else unchanged).</p>
{chart}{more}{table}</section>"""


def _uniqueness(r: ReleaseReport) -> str:
    chart = bar_chart([str(u.locations) for u in r.uniqueness], [u.unique for u in r.uniqueness],
                      title="People with a unique trail, by number of locations visited",
                      x_label="locations where the person appears", y_label="people with a unique trail")
    table = _table(["locations visited", "people", "unique trail", "certainly re-identified"],
                   [(u.locations, u.people, u.unique, u.certain) for u in r.uniqueness])
    return f"""<section id="uniqueness"><h2>Trail uniqueness by number of locations</h2>
<p>A trail is the set of locations where a person appears. A person whose trail no one else shares is easier to
single out; the more locations, the more unique the trail.</p>{chart}{table}</section>"""


def _protection(r: ReleaseReport) -> str:
    if r.protection_note is not None:
        return (f'<section id="protection"><h2>Protection options</h2><p>Not shown: '
                f"{escape(r.protection_note)}.</p></section>")
    rows = [(p.method, "yes" if p.certified else "NO", p.records_before, p.records_withheld, p.records_after,
             f"{p.locations_disclosing} of {p.locations}", p.certain_after) for p in r.protection]
    table = _table(["method", f"certified {r.k}-unlinkable", "de-identified records before", "withheld", "after",
                    "locations still disclosing", "certain re-identifications after"], rows)
    locs = [loc.location for loc in r.protection[0].per_location] if r.protection else []
    per = _table(["location", "records", *[f"withheld by {p.method}" for p in r.protection]],
                 [(loc, r.protection[0].per_location[i].before,
                   *[p.per_location[i].withheld for p in r.protection]) for i, loc in enumerate(locs)])
    warn = "".join(f"<p class='bad'><b>{escape(p.method)} leaves nothing disclosed:</b> every de-identified record "
                   "is withheld, so the release would carry the identified tables only.</p>"
                   for p in r.protection if p.records_after == 0 and p.records_before > 0)
    cmds = "".join(f"<li>{escape(p.method)}: <code>{escape(p.command)}</code></li>" for p in r.protection)
    return f"""<section id="protection"><h2>Protection options for k = {r.k}</h2>
<p>Each method withholds de-identified records (identified records are never changed) until every person and
record has at least {r.k} candidates; the result is checked by an exact audit.</p>{table}{warn}
<h3>Records withheld per location</h3>{per}<h3>Commands that produce each protected release</h3><ul>{cmds}</ul>
</section>"""


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def _qi(r: ReleaseReport) -> str:
    q = r.qi
    if q is None:
        return ""
    combined = ("not given: " + escape(q.note)) if q.certain_combined is None else (
        f"<b>{_n(q.certain_combined)}</b>")
    table = _table(["measure", "value"], [
        ("quasi-identifiers released with the de-identified records", ", ".join(q.qi) or "none"),
        ("de-identified records", _n(q.records)),
        ("groups of records with the same quasi-identifiers", _n(q.classes)),
        (f"records in groups smaller than k = {r.k}", _n(q.records_below_k)),
        ("the records are k-anonymous for k up to", _n(q.k_anonymous_for)),
        ("prosecutor: highest risk of a record", _pct(q.prosecutor_highest)),
        ("prosecutor: records at risk (risk above 20 %)", _pct(q.records_at_risk)),
        ("prosecutor: average risk", _pct(q.prosecutor_average)),
        ("journalist: average risk", _pct(q.journalist_average)),
        ("marketer: expected share re-identified", _pct(q.marketer_average))])
    rel = "".join(f"<li><code>{escape(x)}</code></li>" for x in q.relations)
    extra = "" if q.note is None or q.certain_combined is None else f"<p class='muted'>{escape(q.note)}</p>"
    return f"""<section id="qi"><h2>Trails and quasi-identifiers together</h2>
<p>The de-identified records also carry attributes a person's identified record can be compared with (the
attribute linkage set below). From trails alone <b>{_n(q.certain_trails)}</b> people are certainly
re-identifiable; when a link also needs agreeing attributes: {combined}.</p>{extra}
<p>Attributes compared:</p><ul>{rel}</ul>{table}</section>"""


def _footer(r: ReleaseReport) -> str:
    opts = "".join(f"<li><code>{escape(a)} = {escape(b)}</code></li>" for a, b in r.options) or "<li>defaults</li>"
    return f"""<footer id="reproduce"><h2>Reproducibility</h2><ul>
<li>graphlink version: <code>{escape(r.version)}</code></li>
<li>input: <code>{escape(r.source or r.name)}</code></li>
<li>SHA-256 of the input {escape(r.sha256_of)}: <code>{escape(r.sha256)}</code></li>
<li>options:<ul>{opts}</ul></li></ul></footer>"""


def render_html(report: ReleaseReport) -> str:
    """The report as a complete HTML document (str).

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.report import build_report
    >>> page = render_html(build_report(gl.thesis_example(), 2, protection=False))
    >>> page.startswith("<!DOCTYPE html>") and 'id="exposure"' in page
    True
    """
    r = report
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Re-identification risk report: {escape(r.name)}</title><style>{CSS}</style></head><body>
<h1>Re-identification risk report: {escape(r.name)}</h1>
<p class="muted">Trail re-identification (Malin 2006): which people in the identified tables can be linked to
de-identified records from the set of locations where both appear.</p>
{_summary(r)}{_risk(r)}{_exposure(r)}{_uniqueness(r)}{_qi(r)}{_protection(r)}{_footer(r)}
</body></html>
"""
