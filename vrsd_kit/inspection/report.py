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
         f"of top-k's slots {ins.crowding_means} ({ins.crowded_slots} of {ins.slots})",
         ins.crowding_rate),
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
    top_sources, default_sources = ins.distinct_sources(), ins.distinct_sources("default")
    if top_sources is None or default_sources is None:
        rows.append(("distinct-sources", "distinct sources", "n/a",
                     "the passages carry no source", None))
    else:
        counted = ("counted as crowding past the cap" if ins.max_per_group is not None
                   else "information, not crowding: consecutive chunks of one file are "
                   "often where the answer is")
        rows.append(("distinct-sources", "distinct sources", f"{top_sources:.2f}",
                     f"of {k} per question in top-k, {default_sources:.2f} in the default's "
                     f"list ({counted})", top_sources))
    return rows


_KEEP = "\u00a0"  # joins a name's words while wrapping: textwrap never breaks there


def _slot_lines(q: QuestionFigures) -> list[str]:
    """One line per crowded slot: its rank and name, how it repeats, and the one above
    (each name held together, so wrapping never cuts it)."""
    out = []
    for slot in q.crowded_slots:
        this, above = q.repeats(slot)
        verb = "restates" if slot.relation == "restates" else "is over the source cap after"
        out.append(f"#{slot.rank}{_KEEP}{_whole(this.passage.label)} {verb} "
                   f"#{slot.by}{_KEEP}{_whole(above.passage.label)}")
    return out


def _whole(name: str) -> str:
    return name.replace(" ", _KEEP)


def _wrap(text: str, width: int, indent: str) -> list[str]:
    """``text`` wrapped to ``width`` at spaces: a name is never cut (one longer than the
    line stands on a line of its own)."""
    return [line.replace(_KEEP, " ") for line in textwrap.wrap(
        text, width=width, initial_indent=indent, subsequent_indent=indent + "  ",
        break_long_words=False, break_on_hyphens=False)]


def format_table(ins: Inspection, show: int = 5, width: int = 100) -> str:
    """The terminal's report: what was inspected, the figures, the verdict and the
    ``show`` most crowded questions with what each crowded slot repeats."""
    lines = textwrap.wrap(
        f"vrsd inspect: {ins.store}; {len(ins.questions)} questions ({ins.asked}); top-k "
        f"against the default ({ins.method}) at k={ins.k} of fetch_k={ins.fetch_k}"
        + (f", at most {ins.max_per_group} per source" if ins.max_per_group else "")
        + f"; {ins.seconds:.1f} s", width=width, break_long_words=False,
        break_on_hyphens=False)
    lines.append("")
    for _, name, value, meaning, _ in _figures(ins):
        lines += textwrap.wrap(f"{name:<25}{value:>7}  {meaning}", width=width,
                               subsequent_indent=" " * 34, break_long_words=False,
                               break_on_hyphens=False)
    lines += ["", *_wrap(f"verdict: {ins.verdict}", width, "")]
    crowded = ins.most_crowded(show)
    if crowded:
        lines += ["", *_wrap("most crowded questions (each crowded slot of top-k and the "
                             "passage above it that it repeats):", width, "")]
        for q in crowded:
            lines.append("  " + textwrap.shorten(
                f"{len(q.crowded_slots)}/{len(q.top_k)}  {' '.join(q.question.split())}",
                width=width - 2, placeholder=" ..."))
            for line in _slot_lines(q):
                lines += _wrap(line, width, " " * 8)
    linked = [q for q in ins.questions if any(r.link for r in q.default)][:show]
    if linked:
        lines += ["", *_wrap("links the default followed (a pick a link brought in, the "
                             "earlier pick it links to, and the words both hold that the "
                             "question does not):", width, "")]
        for q in linked:
            lines.append("  " + textwrap.shorten(" ".join(q.question.split()),
                                                 width=width - 2, placeholder=" ..."))
            for rank, r in enumerate(q.default, 1):
                if r.link:
                    lines += _wrap(f"#{rank}{_KEEP}{_whole(r.passage.label)} {r.link}", width,
                                   " " * 8)
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
.linked { display: block; color: #1864ab; font-size: .88em; margin-top: .15em; }
dl.terms dt { font-weight: 600; margin-top: .5em; }
dl.terms dd { margin-left: 1.2em; }
"""


def _plot_png(ins: Inspection) -> bytes:
    """Questions by crowded slots, 0 to k - 1 (the first slot cannot be crowded), and,
    with sources, the distinct sources of top-k and of the default as side-by-side bars,
    as PNG bytes (matplotlib, no pyplot state)."""
    from matplotlib.figure import Figure

    with_sources = ins.has_sources
    fig = Figure(figsize=(10 if with_sources else 6.5, 3.6), dpi=110)
    axes = fig.subplots(1, 2 if with_sources else 1, squeeze=False)[0]
    counts = ins.distribution()
    colours = ["#2f9e44"] + ["#e8870e"] * (len(counts) - 1)
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
            got = [q.distinct_sources(which) for q in ins.questions if q.top_k]
            ax.bar([n + offset for n in slots], [got.count(n) for n in slots], width=0.4,
                   color=colour, label=label)
        ax.set_xticks(list(slots))
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel("distinct sources in the list")
        ax.set_ylabel("questions")
        ax.set_title("sources (information, not crowding)" if ins.max_per_group is None
                     else f"sources (cap: {ins.max_per_group} per source)", fontsize=10)
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
    right = [_item(r, "" if id(r.passage) in top_ids else "new",
                   f'<span class="linked">{escape(r.link)}</span>' if r.link else "")
             for r in q.default]
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


_SOURCES_CAPTION = (" Right: how many questions have lists drawn from 1, 2 … sources, top-k "
                    "and the default side by side.")


def _singular(means: str) -> str:
    """"restate a passage ... or exceed ..." said of one passage."""
    return means.replace("restate ", "restates ", 1).replace(" exceed ", " exceeds ", 1)


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
        "<p>No question has a crowded slot: no top-k slot's passage "
        f"{escape(_singular(ins.crowding_means))}.</p>")
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
<figcaption>Left: how many questions have 0, 1 … {ins.k - 1} crowded slots in top-k (the
first slot has nothing above it).{_SOURCES_CAPTION
if ins.has_sources else ''}</figcaption></figure>
<h2>The most crowded questions</h2>
<p>Top-k (left) against the default (right) on the same candidates. A <b>held back</b>
passage is one top-k returns and the default does not: it <b>restates</b> a passage the
default keeps, or the default <b>made room
for</b> a passage that adds more; <b>new</b> marks the passages the default returns in
their place. {len(crowded)} of {sum(q.crowded for q in ins.questions)} crowded
questions shown, most crowded slots first.</p>
{questions}
<h2>What the figures mean</h2>
<dl class="terms">
<dt>crowded slot</dt><dd>a top-k slot whose passage restates a passage ranked above it
(the judge the default's explanation uses), measured on top-k's own list, whatever the
default does; with a per-source cap, also a slot past the cap of its source. Sharing a
source alone is not crowding: it is shown as distinct sources, for information.</dd>
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
