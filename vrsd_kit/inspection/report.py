"""An ``Inspection`` for people: a compact table for the terminal, and one self-contained
HTML file (inline style, the plot embedded as a base64 PNG: nothing is fetched)."""

from __future__ import annotations

import base64
import io
import os
import textwrap
from html import escape
from pathlib import Path

from .figures import CROWDED_RATE, Inspection, QuestionFigures, Ranked

SHOW = 10
"""The most crowded questions the HTML report shows side by side."""
QUESTION_WIDTH = 240
"""A question longer than this (a sampled passage) is shortened in its heading."""


def _figures(ins: Inspection) -> list[tuple[str, str, str, str, float | None]]:
    """(key, name, value, what it means, number) rows of the figures table."""
    k = ins.k
    rows: list[tuple[str, str, str, str, float | None]] = [
        ("crowding-rate", "crowding rate", f"{ins.crowding_rate:.1%}",
         "of top-k's slots restate or share a source with a passage ranked above them "
         f"({ins.crowded_slots} of {ins.slots})", ins.crowding_rate),
        ("crowded-questions", "crowded questions", f"{ins.crowded_share:.1%}",
         "of questions have at least one crowded slot "
         f"({sum(q.crowded for q in ins.questions)} of {len(ins.questions)})",
         ins.crowded_share),
        ("slots-changed", "slots changed", f"{ins.slots_changed:.2f}",
         f"of {k} per question by the default: {ins.restating} of {ins.held_back} held-back "
         "passages restate a kept one, the rest made room for passages that add more",
         ins.slots_changed),
        ("passages-gained", "distinct passages gained", f"{ins.passages_gained:+.2f}",
         "per question: distinct texts, the default's list against top-k's",
         ins.passages_gained),
    ]
    gained = ins.sources_gained
    top_share, default_share = ins.source_concentration(), ins.source_concentration("default")
    if gained is None or top_share is None or default_share is None:
        rows.append(("source-concentration", "source concentration", "n/a",
                     "the passages carry no source", None))
    else:
        rows += [
            ("sources-gained", "distinct sources gained", f"{gained:+.2f}",
             "per question, the default's list against top-k's", gained),
            ("source-concentration", "source concentration", f"{top_share:.2f}",
             f"of top-k from its most frequent source (the default: {default_share:.2f}; "
             f"1/k = {1 / k:.2f}: every passage from another source)", top_share),
        ]
    return rows


def _crowded_line(q: QuestionFigures, width: int) -> str:
    parts = []
    for slot in q.crowded_slots:
        this, above = q.repeats(slot)
        verb = "restates" if slot.relation == "restates" else "shares a source with"
        parts.append(f"#{slot.rank} {this.passage.label} {verb} #{slot.by} "
                     f"{above.passage.label}")
    return textwrap.shorten("; ".join(parts), width=width, placeholder=" ...")


def format_table(ins: Inspection, show: int = 5, width: int = 100) -> str:
    """The terminal's report: what was inspected, the figures, the verdict and the
    ``show`` most crowded questions with what each crowded slot repeats."""
    lines = textwrap.wrap(
        f"vrsd inspect: {ins.store}; {len(ins.questions)} questions ({ins.asked}); top-k "
        f"against the default ({ins.method}) at k={ins.k} of fetch_k={ins.fetch_k}; "
        f"{ins.seconds:.1f} s", width=width)
    lines.append("")
    for _, name, value, meaning, _ in _figures(ins):
        lines += textwrap.wrap(f"{name:<25}{value:>7}  {meaning}", width=width,
                               subsequent_indent=" " * 34)
    lines += ["", *textwrap.wrap(f"verdict: {ins.verdict}", width=width,
                                 subsequent_indent="  ")]
    crowded = ins.most_crowded(show)
    if crowded:
        lines += ["", "most crowded questions (each crowded slot of top-k and the passage "
                  "above it that it repeats):"]
        for q in crowded:
            lines.append("  " + textwrap.shorten(
                f"{len(q.crowded_slots)}/{len(q.top_k)}  {' '.join(q.question.split())}",
                width=width - 2, placeholder=" ..."))
            lines.append("        " + _crowded_line(q, width - 8))
    return "\n".join(lines)


# --- HTML ------------------------------------------------------------------------------

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #1d1d1f; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
.what { color: #555; margin-top: 0; }
.verdict { font-size: 1.2em; padding: .7em 1em; border-radius: 6px; }
.verdict.crowded { background: #fff1e0; border-left: 6px solid #e8870e; }
.verdict.clean { background: #e9f6ec; border-left: 6px solid #2f9e44; }
table.figures { border-collapse: collapse; margin: 1em 0; }
table.figures td { padding: .3em .8em; border-bottom: 1px solid #ddd; vertical-align: top; }
table.figures td.value { text-align: right; font-variant-numeric: tabular-nums;
                         font-weight: 600; }
figure { margin: 1em 0; } figure img { max-width: 100%; }
figcaption { color: #555; font-size: .9em; }
section.question { border-top: 1px solid #ccc; padding-top: .5em; margin-top: 1.2em; }
section.question h3 { font-size: 1em; margin: .3em 0; }
.own { color: #666; font-size: .9em; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 1.2em; }
.sides h4 { margin: .4em 0; font-size: .95em; color: #444; }
.sides ol { margin: 0; padding-left: 1.6em; }
.sides li { margin: .35em 0; padding: .25em .4em; border-radius: 4px; font-size: .92em; }
li.held-back { background: #fde2e1; }
li.held-back .text { text-decoration: line-through; text-decoration-color: #c92a2a80; }
li.new { background: #e3f2e8; }
.tag { display: inline-block; font-size: .8em; font-weight: 600; padding: 0 .4em;
       border-radius: 3px; margin-right: .3em; }
li.held-back .tag { background: #c92a2a; color: white; }
li.new .tag { background: #2f9e44; color: white; }
.meta { color: #666; font-size: .85em; }
.restates { display: block; color: #a61e1e; font-size: .88em; margin-top: .15em; }
dl.terms dt { font-weight: 600; margin-top: .5em; }
dl.terms dd { margin-left: 1.2em; }
"""


def _plot_png(ins: Inspection) -> bytes:
    """Questions by crowded slots (and, with sources, the source concentration of top-k
    and of the default as side-by-side bars), as PNG bytes (matplotlib, no pyplot
    state)."""
    from matplotlib.figure import Figure

    with_sources = ins.has_sources
    fig = Figure(figsize=(10 if with_sources else 6.5, 3.6), dpi=110)
    axes = fig.subplots(1, 2 if with_sources else 1, squeeze=False)[0]
    counts = ins.distribution()
    colours = ["#2f9e44"] + ["#e8870e"] * ins.k
    ax = axes[0]
    ax.bar(range(len(counts)), counts, color=colours)
    ax.set_xticks(range(len(counts)))
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel(f"crowded slots of top-{ins.k}")
    ax.set_ylabel("questions")
    ax.set_title(f"crowding: {ins.crowding_rate:.0%} of slots, "
                 f"{ins.crowded_share:.0%} of questions", fontsize=10)
    for x, n in enumerate(counts):
        ax.annotate(str(n), (x, n), ha="center", va="bottom", fontsize=8)
    if with_sources:
        ax = axes[1]
        slots = range(1, ins.k + 1)
        for offset, (which, colour, label) in zip((-0.2, 0.2), (
                ("top_k", "#868e96", "top-k"), ("default", "#1c7ed6", "the default")),
                strict=True):
            got = [round(q.source_share(which) * ins.k) for q in ins.questions if q.top_k]
            ax.bar([n + offset for n in slots], [got.count(n) for n in slots], width=0.4,
                   color=colour, label=label)
        ax.set_xticks(list(slots), [f"{n}/{ins.k}" for n in slots])
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("share of the list from its most frequent source")
        ax.set_ylabel("questions")
        ax.set_title("source concentration", fontsize=10)
        ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _item(r: Ranked, css: str = "", note: str = "", attrs: str = "") -> str:
    """One passage of a list; ``css`` "held-back" or "new" tags it."""
    p = r.passage
    meta = [escape(p.label)] if p.id else []
    if p.source is not None and not p.label.startswith(p.source):
        meta.append(f"source {escape(p.source)}")
    meta.append(f"relevance {r.relevance:.3f}")
    tag = css.replace("-", " ")
    cls = f' class="{css}"{attrs}' if css else ""
    return (f"<li{cls}>{f'<span class=tag>{tag}</span>' if tag else ''}"
            f"<span class=meta>{' · '.join(meta)}</span><br><span class=text>"
            f"{escape(' '.join(p.text.split()))}</span>{note}</li>")


def _question_html(q: QuestionFigures, method: str) -> str:
    held = {h.rank: h for h in q.held_back}
    top_ids = {id(r.passage) for r in q.top_k}
    left = []
    for rank, r in enumerate(q.top_k, 1):
        h = held.get(rank)
        if h is None:
            left.append(_item(r))
            continue
        kept = q.default[h.kept - 1].passage
        why = "restates" if h.relation == "restates" else "made room for"
        note = (f'<span class="restates" data-relation="{h.relation}" data-kept="{h.kept}">'
                f"held back: {why} #{h.kept} of the default ({escape(kept.label)})</span>")
        left.append(_item(r, "held-back", note, f' data-rank="{rank}"'))
    right = [_item(r, "" if id(r.passage) in top_ids else "new") for r in q.default]
    own = (f'<p class="own">asked as a question: the store\'s passage '
           f"{escape(q.own.label)}, left out of its own candidates</p>" if q.own else "")
    question = " ".join(q.question.split())
    heading = textwrap.shorten(question, width=QUESTION_WIDTH, placeholder=" …")
    return (f'<section class="question" data-held-back="{q.slots_changed}" '
            f'data-crowded="{len(q.crowded_slots)}">'
            f'<h3 title="{escape(question)}">{escape(heading)}</h3>{own}<div class=sides>'
            f'<div class="side top-k"><h4>top-k (similarity)</h4><ol>{"".join(left)}</ol></div>'
            f'<div class="side default"><h4>the default ({escape(method)})</h4><ol>'
            f'{"".join(right)}</ol></div></div></section>')


_SOURCES_CAPTION = (" Right: how many questions have 1/k, 2/k … of each list from its most "
                    "frequent source, top-k and the default side by side.")


def render_html(ins: Inspection, show: int = SHOW) -> str:
    """The self-contained HTML report (a string)."""
    png = base64.b64encode(_plot_png(ins)).decode("ascii")
    rows = "".join(
        f'<tr data-figure="{key}"'
        + (f' data-value="{number:.6g}"' if number is not None else "")
        + f"><td>{escape(name)}</td><td class=value>{escape(value)}</td>"
        f"<td>{escape(meaning)}</td></tr>"
        for key, name, value, meaning, number in _figures(ins))
    crowded = ins.most_crowded(show)
    questions = "".join(_question_html(q, ins.method) for q in crowded) or (
        "<p>No question has a crowded slot: no top-k passage restates or shares a source "
        "with one ranked above it.</p>")
    state = "crowded" if ins.crowded else "clean"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vrsd inspect: {escape(ins.store)}</title><style>{_STYLE}</style></head>
<body>
<h1>Will diversity help on this store?</h1>
<p class="what">{escape(ins.store)} · {len(ins.questions)} questions ({escape(ins.asked)}) ·
top-k against the default ({escape(ins.method)}) at k = {ins.k} of fetch_k = {ins.fetch_k} ·
{ins.seconds:.1f} s</p>
<p id="verdict" class="verdict {state}" data-crowded="{str(ins.crowded).lower()}">
{escape(ins.verdict)}</p>
<table class="figures" id="figures">{rows}</table>
<figure><img alt="Questions by crowded slots of top-{ins.k}" src="data:image/png;base64,{png}">
<figcaption>Left: how many questions have 0, 1, 2 … crowded slots in top-k.{_SOURCES_CAPTION
if ins.has_sources else ''}</figcaption></figure>
<h2>The most crowded questions</h2>
<p>Top-k (left) against the default (right) on the same candidates. A <b>held back</b>
passage is one top-k returns and the default does not: it <b>restates</b> a passage the
default keeps (90 % or more of its word pairs are in it), or the default <b>made room
for</b> a passage that adds more; <b>new</b> marks the passages the default returns in
their place. {len(crowded)} of {sum(q.crowded for q in ins.questions)} crowded
questions shown, most crowded slots first.</p>
{questions}
<h2>What the figures mean</h2>
<dl class="terms">
<dt>crowded slot</dt><dd>a top-k slot whose passage restates a passage ranked above it
(90 % or more of its word pairs are in it) or comes from the same source as one: measured
on top-k's own list, whatever the default does.</dd>
<dt>crowded question</dt><dd>a question with at least one crowded slot.</dd>
<dt>crowding rate</dt><dd>crowded slots over all top-k slots.</dd>
<dt>verdict</dt><dd>crowded when the crowding rate is at least {CROWDED_RATE:.0%}: on
labelled corpora (docs/inspect.md), the default's diversity added evidence from there
up and none below.</dd>
<dt>held-back slot</dt><dd>a top-k slot whose passage the default does not return,
because it restates a kept passage or to make room for one that adds more.</dd>
</dl>
</body></html>
"""


def write_html(ins: Inspection, path: str | os.PathLike[str], show: int = SHOW) -> Path:
    """Write ``render_html`` to ``path`` (folders created); returns the path.

    Raises:
        ValueError: naming ``html`` when the file cannot be written.
    """
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_html(ins, show), encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"html: cannot write {path}: {exc.strerror or exc}") from None
    return out
