"""The release report as one self-contained HTML file (docs/report.md).

No external asset: the CSS is inline, the charts are inline SVG drawn here, there is no script; the file opens
offline and prints to PDF (:mod:`graphlink.io.report_pdf`; print CSS keeps rows, charts and cards whole and
headings with what follows them, and puts the commands and per-location tables in an appendix).  Every value that comes
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
margin-top:1.6rem}h3{font-size:1rem;margin-bottom:.3rem}
.lead{font-size:1.05rem}.muted{color:#57606a;font-size:.9rem}
.meta{color:#57606a;font-size:.9rem;margin:.2rem 0 .8rem}
.cards{display:flex;flex-wrap:wrap;gap:.8rem;margin:1rem 0}
.card{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .9rem;min-width:12rem;flex:1}
.card .n{font-size:1.6rem;font-weight:600}.bad{color:#b42318}.good{color:#1a7f37}
.recommend{border-left:4px solid #0969da;background:#f6f8fa;padding:.4rem .9rem;margin:1rem 0}
.recommend h2{border:none;margin-top:.4rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:right}th{background:#f6f8fa}
td.t,th.t{text-align:left}
code{background:#f6f8fa;padding:.1rem .3rem;border-radius:4px;font-size:.85rem;white-space:pre-wrap;
word-break:normal;overflow-wrap:break-word}
svg{max-width:100%;height:auto}
figure{margin:.6rem 0}
figure,tr,.cards,.card,li,.pair>section{break-inside:avoid;page-break-inside:avoid}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1.2rem;align-items:start}.pair h2,.pair h3{margin-top:1rem}
.recommend table,#protection table{width:100%}
.appendix table{font-size:.8rem}.appendix th,.appendix td{padding:.1rem .4rem}
h2,h3{break-after:avoid;page-break-after:avoid}
.appendix{break-before:page;page-break-before:always}
@page{size:A4;margin:14mm 12mm}
@media print{body{margin:0;max-width:none;font-size:9.5pt;line-height:1.35}a{color:inherit}
h1{font-size:16pt}h2{font-size:12pt;margin-top:.9rem}table{font-size:8.5pt}.lead{font-size:10pt}
.card .n{font-size:15pt}.cards{gap:.5rem;margin:.6rem 0}.card{min-width:9rem;padding:.4rem .7rem}}
"""


def _n(value: int) -> str:
    return f"{value:,}"


def bar_chart(labels: Sequence[str], values: Sequence[int], *, title: str, x_label: str, y_label: str,
              highlight: Sequence[bool] | None = None, width: int = 760, height: int = 260) -> str:
    """A vertical bar chart as inline SVG (labels escaped; slanted when there are more than 12 bars).  O(bars)."""
    n = max(len(values), 1)
    top = max(max(values, default=0), 1)
    left, bottom, right, head = 56, (84 if n > 12 else 46), 12, 24
    height += bottom - 46
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
    rotate = n > 12  # many bars: labels slanted so neighbours never run together
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
            if rotate:
                lx, ly = x + bw / 2 + 3, head + plot_h + 8
                parts.append(f'<text x="{lx:.1f}" y="{ly}" font-size="10" text-anchor="end" '
                             f'transform="rotate(-60 {lx:.1f} {ly})">{escape(short)}</text>')
            else:
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


def _pct_of(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "—"


def _summary(r: ReleaseReport) -> str:
    verdict_class = "good" if r.k_unlinkable else "bad"
    if r.k > 2:
        middle = sum(b.people for b in r.histogram if 2 <= b.candidates < r.k and not b.more)
        second = (f'<div class="card"><div class="n {"bad" if middle else "good"}">{_n(middle)}</div>people have '
                  f"between 2 and {r.k - 1} candidate records</div>")
    else:
        second = (f'<div class="card"><div class="n">{_n(r.at_k)}</div>people have exactly {r.k} candidate '
                  f"records: someone who guesses is right 1 time in {r.k}</div>")
    purpose = f"<p><b>Purpose:</b> {escape(r.purpose)}</p>" if r.purpose else ""
    return f"""<section id="summary">{purpose}
<p class="lead">This release names <b>{_n(r.people)}</b> people and holds <b>{_n(r.records)}</b> de-identified
records at <b>{_n(r.locations)}</b> locations.</p>
<p class="lead {verdict_class}"><b>Verdict for k = {r.k}:</b> {escape(r.verdict)}</p>
<p>{escape(r.k_meaning)}</p>
<div class="cards">
<div class="card"><div class="n {'bad' if r.certain else 'good'}">{_n(r.certain)}</div>people can be
re-identified with certainty from where their records appear</div>
{second}
<div class="card"><div class="n">{_n(r.no_candidate)}</div>people match no de-identified record at all</div>
</div>
<div class="recommend" id="recommendation"><h2>Recommendation</h2><p>{escape(r.recommendation)}</p>
{_residual(r)}
<h3>Next steps</h3><ol>{''.join(f"<li>{escape(step)}</li>" for step in r.next_steps)}</ol></div>
</section>"""


def _residual(r: ReleaseReport) -> str:
    """The risk left after each protection option, beside the release as it is (first page)."""
    if not r.protection:
        return ""
    def expected(e: object) -> str:
        return "—" if e is None else e.words()  # type: ignore[attr-defined]

    rows: list[Sequence[object]] = [("the release as it is", "none", "none", r.certain, r.at_k,
                                     expected(r.expected_correct))]
    for p in r.ranked_protection:
        rows.append((p.label + ("" if p.certified else " (not certified)"),
                     f"{_n(p.records_withheld)} ({_pct_of(p.records_withheld, p.records_before)})",
                     _n(p.locations_emptied), p.certain_after if p.certified else "—",
                     "—" if p.people_at_k is None else p.people_at_k, expected(p.expected_correct)))
    note = ("<p class='muted'>Expected correct re-identifications: how many people an attacker who names each "
            "person's most likely record gets right, on average over every assignment of records to people that "
            "fits the release; an estimate where the release is too large to count exactly.</p>")
    return ("<h3>Risk left after each option</h3>" + _table(
        ["option", "de-identified records withheld", "locations left with nothing", "certain re-identifications",
         f"people at 1 in {r.k} (exactly {r.k} candidates)", "expected correct re-identifications"], rows) + note)


def _audience(r: ReleaseReport) -> str:
    recipients = ("<ul>" + "".join(f"<li>{escape(x)}</li>" for x in r.recipients) + "</ul>") if r.recipients else (
        "<p class='muted'>Not stated: the figures hold for any recipient of every table.</p>")
    return f"""<section id="audience"><h2>Who receives the release, and the attacker assumed</h2>
<h3>Recipients</h3>{recipients}
<h3>Attacker</h3><p>{escape(r.attacker)}</p>
<h3>Data model</h3><p>{escape(r.model.plain)}</p><p>{escape(r.model.would_change)}</p></section>"""


def _risk(r: ReleaseReport) -> str:
    labels = [f"{b.candidates}+" if b.more else str(b.candidates) for b in r.histogram]
    values = [b.people for b in r.histogram]
    high = [b.candidates < r.k and not b.more for b in r.histogram]
    chart = bar_chart(labels, values, title="People by number of candidate records",
                      x_label="candidate records (1 = certainly re-identified)", y_label="people", highlight=high,
                      width=480, height=240)
    return f"""<section id="risk"><h2>Risk: people by number of candidates</h2>
<p>A person's candidates are the de-identified records (or "not in the de-identified data") that could be theirs
in some consistent reading of the release. One candidate means certain re-identification; a person with c
candidates is re-identified with probability 1/c by someone who guesses. Bars in red are below k = {r.k}.</p>
<figure>{chart}</figure></section>"""


def _exposure(r: ReleaseReport) -> str:
    if r.exposure_note is not None:
        return (f'<section id="exposure"><h2>Exposure per location</h2><p>Not shown: '
                f"{escape(r.exposure_note)}.</p></section>")
    rows = sorted(r.exposure, key=lambda e: (-e.lost, e.location))
    shown = rows[:40]
    chart = bar_chart([e.location for e in shown], [e.lost for e in shown],
                      title="Certain re-identifications that disappear if the location withholds its table",
                      x_label="location (most exposing first)", y_label="certain re-identifications removed")
    more = f"<p class='muted'>The chart shows the first 40 of {len(rows)} locations.</p>" if len(rows) > 40 else ""
    top = ", ".join(f"{e.location} ({_n(e.lost)})" for e in rows[:3] if e.lost)
    lead = f" The most exposing: {escape(top)}." if top else ""
    return f"""<section id="exposure"><h2>Exposure per location</h2>
<p>How many of the {_n(r.certain)} certain re-identifications disappear if one location withholds its whole
de-identified table (each location on its own, everything else unchanged).{lead} The counts per location are in
the appendix.</p><figure>{chart}</figure>{more}</section>"""


def _uniqueness(r: ReleaseReport) -> str:
    chart = bar_chart([str(u.locations) for u in r.uniqueness], [u.unique for u in r.uniqueness],
                      title="People with a unique trail, by number of locations visited",
                      x_label="locations where the person appears", y_label="people with a unique trail",
                      width=480, height=240)
    return f"""<section id="uniqueness"><h2>Trail uniqueness by number of locations</h2>
<p>A trail is the set of locations where a person appears. A person whose trail no one else shares is easier to
single out; the more locations, the more unique the trail (the counts are in the appendix).</p>
<figure>{chart}</figure></section>"""


def _uniqueness_table(r: ReleaseReport) -> str:
    if not r.uniqueness:
        return ""
    return "<h3>Trail uniqueness by number of locations</h3>" + _table(
        ["locations visited", "people", "unique trail", "certainly re-identified"],
        [(u.locations, u.people, u.unique, u.certain) for u in r.uniqueness])


def _protection(r: ReleaseReport) -> str:
    if r.protection_note is not None:
        return (f'<section id="protection"><h2>Protection options</h2><p>Not shown: '
                f"{escape(r.protection_note)}.</p></section>")
    ranked = r.ranked_protection
    rows = [(p.label, "yes" if p.certified else "NO", p.records_before,
             f"{_n(p.records_withheld)} ({_pct_of(p.records_withheld, p.records_before)})", p.records_after,
             f"{p.locations_disclosing} of {p.locations}", p.certain_after) for p in ranked]
    table = _table(["option", f"reaches k = {r.k}", "de-identified records before", "withheld", "after",
                    "locations still disclosing", "certain re-identifications after"], rows)
    warn = "".join(f"<p class='bad'><b>{escape(p.label)} leaves nothing disclosed:</b> every de-identified record "
                   "is withheld, so the release would carry the identified tables only.</p>"
                   for p in ranked if p.records_after == 0 and p.records_before > 0)
    same = len({(p.records_withheld, p.locations_disclosing) for p in ranked}) == 1 and len(ranked) > 1
    note = (" All options withhold the same number of records here; any of them will do." if same else
            " The first row withholds the least among those that reach k.")
    return f"""<section id="protection"><h2>Protection options for k = {r.k}</h2>
<p>Each option withholds de-identified records (identified records are never changed) until every person and
record has at least {r.k} candidates; an exact audit checks the result.{note} The records withheld per location
and the command that produces each protected release are in the appendix.</p>{table}{warn}</section>"""


def _per_location(r: ReleaseReport) -> str:
    """One table per location: its records, the certain re-identifications its table exposes, and what each
    protection option withholds there."""
    ranked = r.ranked_protection
    exposure = {e.location: e for e in r.exposure} if r.exposure_note is None else {}
    if not exposure and not ranked:
        return ""
    if ranked:
        names = [loc.location for loc in ranked[0].per_location]
        before = {loc.location: loc.before for loc in ranked[0].per_location}
    else:
        names = [e.location for e in r.exposure]
        before = {e.location: e.deidentified for e in r.exposure}
    if exposure:
        names.sort(key=lambda c: (-exposure[c].lost if c in exposure else 0, c))
    withheld = [{loc.location: loc.withheld for loc in p.per_location} for p in ranked]
    header = ["location", "de-identified records"]
    header += ["certain removed if withheld"] if exposure else []
    header += [f"withheld by {p.label}" for p in ranked]
    rows = []
    for c in names:
        row: list[object] = [c, before.get(c, 0)]
        if exposure:
            row.append(exposure[c].lost if c in exposure else "—")
        row += [w.get(c, 0) for w in withheld]
        rows.append(row)
    lead = ("Each location's de-identified records; how many certain re-identifications disappear if that location "
            "alone withholds its table; and how many records each protection option withholds there.")
    return f"<h3>Per location</h3><p class='muted'>{lead}</p>" + _table(header, rows)


def _commands(r: ReleaseReport) -> str:
    if not r.protection:
        return ""
    cmds = "".join(f"<li>{escape(p.label)}: <code>{escape(p.command)}</code></li>" for p in r.ranked_protection)
    return f"<h3>Commands that produce each protected release</h3><ul>{cmds}</ul>"


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


_OPTION_WORDS = {"k": "k", "reserved": "records left out", "multiplicity": "records per person",
                 "seed": "tie-breaking seed", "exposure": "exposure per location", "protection": "protection options",
                 "qi_links": "attribute linkage set", "id_key": "identified key column",
                 "deid_key": "de-identified key column"}


def _option_words(name: str, value: str) -> str:
    label = _OPTION_WORDS.get(name, name.replace("_", " "))
    if value in ("True", "False") and name in ("exposure", "protection"):
        return f"{label}: {'computed' if value == 'True' else 'not computed'}"
    if value == "auto":
        return f"{label}: decided from the data"
    return f"{label}: {value}"


def _footer(r: ReleaseReport) -> str:
    opts = "".join(f"<li>{escape(_option_words(a, b))}</li>" for a, b in r.options) or "<li>defaults</li>"
    return f"""<footer id="reproduce"><h3>Reproducibility</h3><ul>
<li>graphlink version: <code>{escape(r.version)}</code></li>
<li>input: <code>{escape(r.source or r.name)}</code></li>
<li>SHA-256 of the input {escape(r.sha256_of)}: <code>{escape(r.sha256)}</code></li>
<li>reading of the data: {escape(r.model.label)}</li>
<li>options:<ul>{opts}</ul></li></ul></footer>"""


def _appendix(r: ReleaseReport) -> str:
    return (f'<section class="appendix" id="appendix"><h2>Appendix</h2>{_commands(r)}{_per_location(r)}'
            f'<div class="pair"><div>{_uniqueness_table(r)}</div><div>{_footer(r)}</div></div></section>')


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
    who = f" by {escape(r.prepared_by)}" if r.prepared_by else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(r.heading)}</title><style>{CSS}</style></head><body>
<h1>{escape(r.heading)}</h1>
<p class="meta">Prepared {escape(r.created)}{who} · release <b>{escape(r.name)}</b> · k = {r.k}</p>
{_summary(r)}{_audience(r)}{_protection(r)}<div class="pair">{_risk(r)}{_uniqueness(r)}</div>{_exposure(r)}
{_qi(r)}{_appendix(r)}
</body></html>
"""
