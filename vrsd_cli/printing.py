"""What ``vrsd`` prints: user data made safe for a terminal, and ``vrsd search``'s results.

Every text the command prints that comes from the user's files or input (chunk texts,
file names, excerpts, questions, paths in messages) goes through ``safe``: a control
character is shown as its escape (``\\x1b``, ``\\r``, ``\\x9b``) instead of being sent
to the terminal, where ``ESC [2J`` would clear the screen and an OSC sequence retitle
the window. ``--json`` output is escaped the same way (``safe_json``).
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import textwrap
from collections import Counter
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.documents import Document

# C0 controls (ESC, CR, BEL, ...) but tab and newline, DEL, C1 controls (CSI \x9b, OSC
# \x9d, ...), and the bidirectional overrides and isolates that reorder what a line shows.
# Lone surrogates too: a file name's bytes that are not UTF-8 (``os.fsdecode`` carries
# byte 0xff as U+DCFF) cannot be written as UTF-8 at all.
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROLS = re.compile(f"[{_CONTROL}]")
_CONTROLS_AND_LINES = re.compile(f"[{_CONTROL}\n]")
_NOT_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # json.dumps keeps them
_SURROGATES = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    r"""'\x1b', '\r', '\n', '\u202e'; a byte that was not UTF-8 (U+DC80-U+DCFF, as
    ``os.fsdecode`` carries it) as that byte: '\xff'."""
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return ascii(match.group())[1:-1]


def has_undecodable(text: str) -> bool:
    """Whether ``text`` carries bytes that were not UTF-8 (lone surrogates)."""
    return _SURROGATES.search(text) is not None


def safe(text: object, *, one_line: bool = False) -> str:
    """``text`` with every control character written as its escape (``\\x1b``), so
    printing it cannot move the cursor, clear the screen or retitle the window. Tabs and
    newlines are kept, newlines escaped too when ``one_line`` (a file name, a message).
    Escaping twice changes nothing (an escape is printable)."""
    pattern = _CONTROLS_AND_LINES if one_line else _CONTROLS
    return pattern.sub(_escape, str(text))


def safe_json(value: Any) -> str:
    """``value`` as indented JSON, non-ASCII text kept readable, every control character
    escaped (``json.dumps`` escapes C0 controls; DEL, C1 and the bidirectional controls
    are escaped here as ``\\u009b``, still valid JSON), and valid UTF-8 whatever it
    holds: a byte that was not UTF-8 in a name becomes the text ``\\xff``, as ``safe``
    shows it (``hits_json`` adds the exact bytes)."""
    text = json.dumps(value, ensure_ascii=False, indent=1)
    text = _SURROGATES.sub(lambda m: _escape(m).replace("\\", "\\\\"), text)
    return _NOT_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def emit(text: str, *, file: IO[str] | None = None) -> None:
    """Print ``text`` made ``safe`` (newlines kept) to ``file`` (stdout by default)."""
    print(safe(text), file=sys.stdout if file is None else file)


def fit(text: str, width: int) -> str:
    """``text`` on one line in at most ``width`` characters: whole when it fits, else cut
    at the last word boundary that leaves at least half of ``width`` (else mid-word),
    ending with an ellipsis. Never empty for a non-empty text: a long first word (a URL,
    a path, text without spaces) is cut, not dropped."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    room = max(width - 1, 1)  # the ellipsis takes one
    cut = flat[:room]
    at_word = cut.rsplit(" ", 1)[0] if " " in cut else ""
    return (at_word if len(at_word) >= room // 2 else cut).rstrip(" ") + "…"


def format_hits(query: str, docs: list[Document], *, method: str, k: int, fetch_k: int,
                fetched: int, in_index: int | None = None, width: int = 100) -> str:
    """Readable search results with their reasons: the method, how many were kept of how
    many fetched (``k`` and ``fetch_k`` as asked, ``fetched`` the candidates the search
    had, ``in_index`` the chunks the index holds), each result's relevance (and its parts, the
    cosine and the words' BM25, when the method used both), its text, the earlier result a
    link brought it in by ("linked to #1 by: Tim Burton"), and the candidates
    plain top-k would have returned that the method held back beside the result they
    are attached to, with the relation when the entry has one. User text is ``safe``."""
    infos = [doc.metadata.get("vrsd", {}) for doc in docs]
    fused = any("lexical" in info for info in infos)
    ranked_by = "relevance" if fused else "cosine"  # the order a held-back "#n" is in
    if fused:
        relevance = ("relevance: the fused score the default ranked by, z(z(cosine) + z(BM25 "
                     "of the words)), each z within the fetched pool (0 its mean, 1 one "
                     "standard deviation above); cosine: the vectors' cosine to the question; "
                     "a held-back '#n' is its place in top-k by this relevance, not in "
                     "--method similarity's cosine order")
    else:
        relevance = "relevance: cosine to the question"
    held_back = [entry for info in infos for entry in info.get("held_back", ())]
    lines = [f"{len(docs)} results for {safe(repr(query))}",
             f"method: {safe(method, one_line=True)}: "
             f"{_kept_of_fetched(len(docs), k, fetch_k, fetched, in_index)}",
             relevance]
    top = len(docs)
    if any(info.get("stopped") == "restatements" for info in infos):
        top = k
        lines.append(f"{len(docs)} results of the {k} asked: every other candidate repeats one "
                     "of these (--fill-with-copies returns copies too)")
    if held_back:
        lines.append(f"held back from top-{top} by {ranked_by}: {_held_back_count(held_back)}")
    lines.append("")
    for i, (doc, info) in enumerate(zip(docs, infos, strict=True), 1):
        rel = info.get("relevance")
        source = safe(doc.metadata.get("source", "?"), one_line=True)
        head = f"{i}. {source} (chunk {safe(doc.metadata.get('chunk', '?'), one_line=True)})"
        if rel is not None:
            head += f"  relevance {rel:.3f}"
        if "lexical" in info:  # the default's parts: the vector's and the words'
            head += f" (cosine {info['cosine']:.3f}, words {info['lexical']:.1f})"
        copy = info.get("copy_of")
        if isinstance(copy, dict):  # a copy that filled a slot (--fill-with-copies)
            verb = "contains" if copy.get("relation") == "contains" else "restates"
            head += f"  [a copy: {verb} #{int(copy.get('rank', 0)) + 1}]"
        lines.append(head)
        body = safe(" ".join(doc.page_content.split()))
        lines += textwrap.wrap(body, width=width, initial_indent="   ", subsequent_indent="   ",
                               max_lines=4, placeholder=" ...")
        lines += link_lines(info, "   ", width)
        lines += _held_back_lines(info.get("held_back", ()), width, ranked_by)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def link_lines(entry: dict[str, Any], indent: str, width: int) -> list[str]:
    """The line under a pick a link brought in (``vrsd_kit.rerank.link_note``: "linked to
    #1 by: Tim Burton"), ``safe`` and shortened to ``width`` after ``indent``; [] for a
    pick no link brought in."""
    from vrsd_kit.rerank import link_note

    note = link_note(entry.get("linked_to"))
    if note is None:
        return []
    return [indent + textwrap.shorten(safe(note, one_line=True), width=width - len(indent))]


def _kept_of_fetched(kept: int, k: int, fetch_k: int, fetched: int,
                     in_index: int | None) -> str:
    """"4 kept of 20 fetched by similarity", and, when the index holds fewer chunks than
    were asked for, what was asked and how many it holds."""
    said = f"{kept} kept of {fetched} fetched by similarity"
    if fetched >= fetch_k and kept >= min(k, fetched):
        return said
    asked = f"--k {k}, --fetch-k {fetch_k}"
    if in_index is not None and in_index < fetch_k:
        plural = "s" * (in_index != 1)
        return f"{said} ({asked}: the index holds only {in_index} chunk{plural})"
    return f"{said} ({asked})"


_RELATIONS = {"restates": "restates this", "contains": "contains this",
              "displaced": "made room for this"}


def _held_back_count(held: list[Any]) -> str:
    """How many were held back, by relation when the entries say it."""
    relations = Counter(str(e["relation"]) for e in held if isinstance(e, dict)
                        and e.get("relation"))
    parts = [f"{n} {_RELATIONS.get(r, r).removesuffix(' this')}" for r, n in relations.items()]
    return f"{len(held)}" + (f" ({', '.join(parts)})" if parts else "")


def _held_back_lines(held: Any, width: int, ranked_by: str = "relevance") -> list[str]:
    """One line per held-back entry: a dict (source, rank in top-k by ``ranked_by``,
    relation, excerpt), or a bare id (held back, no relation given). The excerpt is
    ``fit`` into what the line has left (on a line of its own when that is too little),
    always between both quotes."""
    ids = [safe(entry, one_line=True) for entry in held if not isinstance(entry, dict)]
    lines = [f"   - held back: {', '.join(ids)}"] if ids else []
    for entry in (e for e in held if isinstance(e, dict)):
        where = safe(entry.get("source") or entry.get("id") or "?", one_line=True)
        rank = entry.get("rank")
        line = f"   - held back {where}" + (f" (#{rank} by {ranked_by})"
                                               if isinstance(rank, int) else "")
        relation = entry.get("relation")
        if relation:
            line += f": {safe(_RELATIONS.get(relation, relation), one_line=True)}"
        excerpt = safe(" ".join(str(entry.get("excerpt") or "").split()))
        if excerpt:
            room = width - len(line) - 4  # ': "' and '"'
            if room >= min(40, len(excerpt)):
                line += f': "{fit(excerpt, room)}"'
            else:  # a long source name: the excerpt on the next line, indented
                lines.append(line + ":")
                line = f'     "{fit(excerpt, width - 7)}"'
        lines.append(line)
    return lines


def hits_json(query: str, docs: list[Document], *, method: str, options: dict[str, Any],
              label: str, k: int, fetch_k: int, fetched: int, in_index: int | None) -> str:
    """The search as JSON for scripts: the query; ``method``, the method's name, with its
    ``options`` and the ``method_label`` the terminal shows; ``k`` and ``fetch_k`` as
    asked, ``kept`` and ``fetched`` as done, ``index_chunks`` (the chunks the index holds);
    and each result's text and metadata (``metadata["vrsd"]`` included), ``safe_json``.
    A ``source`` whose name is not UTF-8 is shown escaped (``\\xff``) and its exact
    bytes are added, base64, as ``source_b64``."""
    return safe_json({
        "query": query, "method": method, "options": options, "method_label": label,
        "k": k, "fetch_k": fetch_k, "kept": len(docs), "fetched": fetched,
        "index_chunks": in_index,
        "results": [{"text": doc.page_content, "metadata": _with_raw_source(doc.metadata)}
                    for doc in docs],
    })


def _with_raw_source(metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` with ``source_b64`` (the name's bytes, base64) when ``source`` is a
    file name that is not UTF-8 (else as it is)."""
    source = metadata.get("source")
    if not isinstance(source, str) or not has_undecodable(source):
        return metadata
    return {**metadata, "source_b64": base64.b64encode(os.fsencode(source)).decode("ascii")}
