"""``vrsd demo``: the recommended selection against plain top-k, VRSD, MMR and DPP.

The corpus (``data/demo_corpus.txt``) is 67 short passages on eight topics
(coffee, sleep, exercise, space, oceans, Python, bread, Rome), written with
deliberate near-duplicates and paraphrases: ids that differ only in their last
letter (``coffee-02a``, ``coffee-02b``, ``coffee-02c``) state the same fact.
Plain similarity fills its top-k with those; the demo shows what each method
returns instead, with each set's Sim. and Div., how many distinct facts it
covers and how many paraphrase pairs it repeats. The first row is what
``DiverseRetriever()`` does with its defaults (``vrsd_core.DEFAULT_METHOD``).

Everything is offline: the bundled all-MiniLM-L6-v2, an ``InMemoryVectorStore``,
and one ``DiverseRetriever`` per method. Embeddings are cached on disk
(``disk_embeddings``), so a second run skips encoding.
"""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

DEFAULT_QUERY = "Will an afternoon coffee keep me awake at night?"
# Ordinary questions a new user might type about the built-in corpus, written after the
# default's rule was fixed and never used to choose it (the demo tests count facts and
# repeats on them).
ORDINARY_QUESTIONS = (
    "How many hours should a grown-up sleep?",
    "Do screens before bed hurt sleep?",
    "What keeps me from sleeping well after a glass of wine?",
    "Is it bad to sleep in on weekends?",
    "What temperature should my bedroom be?",
    "Does working out make it easier to fall asleep?",
    "Should I stretch before running?",
    "How many steps a day should I walk?",
    "Why is the surface of Mars rusty?",
    "How many moons does Jupiter have?",
    "How long does the Sun's light travel before it reaches us?",
    "What are Saturn's rings made of?",
    "How much of our CO2 ends up in the sea?",
    "Why are corals losing their colour?",
    "How deep is the deepest ocean trench?",
    "What does the Gulf Stream do?",
    "Why is inserting at the front of a Python list slow?",
    "How do I build a list from another list in one line?",
    "Can Python threads run in parallel?",
    "What makes yeast dough puff up?",
    "Why should I knead bread?",
    "When did Rome stop being a republic?",
    "Why has Roman concrete lasted so long?",
    "How did the Romans move water to their cities?",
)
WIDTH = 100  # the widest report; a narrower terminal gets its own width
MIN_WIDTH = 60
DEFAULT_FETCH_K = 20


def report_width() -> int:
    """The terminal's width (``$COLUMNS`` when set, else the terminal's, else 100),
    kept within [60, 100]: whole passages wrap to it, and wider lines read badly."""
    columns = shutil.get_terminal_size((WIDTH, 24)).columns
    return max(MIN_WIDTH, min(WIDTH, columns))


@dataclass(frozen=True)
class Passage:
    """One corpus line: an id and its text."""

    id: str
    text: str


def read_corpus(text: str, origin: str = "corpus") -> list[Passage]:
    """Parse ``<id> | <text>`` lines (``#`` comments and blank lines skipped).

    Raises:
        ValueError: naming ``corpus``, for a malformed line, a repeated id, or no passages.
    """
    passages: list[Passage] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pid, sep, body = (part.strip() for part in line.partition("|"))
        if not sep or not pid or not body:
            raise ValueError(f"corpus: {origin} line {n}: expected '<id> | <text>'")
        if pid in seen:
            raise ValueError(f"corpus: {origin} line {n}: id {pid!r} used twice")
        seen.add(pid)
        passages.append(Passage(pid, body))
    if not passages:
        raise ValueError(f"corpus: {origin} has no passages")
    return passages


def load_corpus(path: str | os.PathLike[str] | None = None) -> list[Passage]:
    """The built-in corpus, or the ``<id> | <text>`` file at ``path``."""
    if path is None:
        text = resources.files("vrsd_cli").joinpath("data/demo_corpus.txt").read_text(
            encoding="utf-8"
        )
        return read_corpus(text, "demo_corpus.txt")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"corpus: cannot read {path}: {exc}") from None
    return read_corpus(text, str(path))


def fact_of(passage_id: str) -> str:
    """The fact a passage states: its id without a trailing paraphrase letter."""
    return re.sub(r"(?<=\d)[a-z]$", "", passage_id)


def paraphrase_pairs(ids: list[str]) -> int:
    """How many pairs of ``ids`` state the same fact (paraphrases of each other)."""
    facts = [fact_of(i) for i in ids]
    return sum(facts[a] == facts[b] for a in range(len(facts)) for b in range(a + 1, len(facts)))


def _passage(rank: int, pid: str, relevance: float, text: str, width: int) -> list[str]:
    """One pick: rank, id and relevance, then the whole passage wrapped to ``width``,
    continued under its first word (a reader judges the picks by their text)."""
    head = f"  {rank:>2}. {pid:<13} {relevance:5.3f}  "
    return textwrap.wrap(" ".join(text.split()), width=width, initial_indent=head,
                         subsequent_indent=" " * len(head), break_on_hyphens=False)


def _header(name: str, about: str, stats: str, width: int) -> list[str]:
    """The method's name and what it is, its set's figures right-aligned on the same line
    when they fit, else on the next."""
    left = f"{name} ({about})"
    gap = width - len(left) - len(stats)
    if gap >= 2:
        return [left + " " * gap + stats]
    return [left, stats.rjust(width)]


def _held_line(entry: dict[str, Any], pick: str, width: int) -> list[str]:
    """One held-back entry under the pick it is attached to: its id, its place in plain
    top-k, the relation, and its start."""
    if entry["relation"] == "restates":
        why = f"restates {pick} ({entry['share']:.0%} of its word pairs)"
    else:
        why = f"{pick} took its place"
    head = f"      held back: {entry['id']} (top-k #{entry['rank']}), {why}: "
    return textwrap.wrap(f"{head}{entry.get('excerpt', '')}", width=width,
                         subsequent_indent=" " * 17, break_on_hyphens=False)


def _overview(retrievers: list[tuple[str, str, Any]], k: int, width: int) -> list[str]:
    """Facts and repeats of each method over every built-in question (the default
    first), and on how many questions it covers fewer facts than plain top-k."""
    questions = (DEFAULT_QUERY, *ORDINARY_QUESTIONS)
    picked = {name: [[d.id or "" for d in r.invoke(q)] for q in questions]
              for name, _, r in retrievers}
    top = [len({fact_of(i) for i in ids}) for ids in picked["similarity"]]
    lines = [textwrap.fill(
        f"All {len(questions)} built-in questions, k={k} each ({len(questions) * k} "
        "slots): distinct facts returned, repeated facts (pairs of picks that state one "
        "fact), and questions where a method returns fewer distinct facts than plain "
        "top-k.", width=width, break_on_hyphens=False),
        "", f"  {'method':<20}{'facts':>8}{'repeats':>10}{'fewer than top-k':>19}"]
    for name, _, _ in retrievers:
        facts = [len({fact_of(i) for i in ids}) for ids in picked[name]]
        repeats = sum(paraphrase_pairs(ids) for ids in picked[name])
        fewer = sum(f < t for f, t in zip(facts, top, strict=True))
        lines.append(f"  {name:<20}{sum(facts):>8}{repeats:>10}{fewer:>19}")
    lines += ["", textwrap.fill(
        "These passages are paraphrase pairs written for the demo; the default is chosen "
        "for the evidence it returns on real multi-hop questions (docs/evaluation.md).",
        width=width, break_on_hyphens=False)]
    return lines


def run_demo(
    query: str | None = None,
    *,
    k: int = 5,
    fetch_k: int | None = None,
    lambda_mult: float = 0.5,
    theta: float = 0.5,
    corpus_path: str | os.PathLike[str] | None = None,
    model: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    embeddings: Any = None,
) -> str:
    """The demo's report for ``query`` (None: ``DEFAULT_QUERY``), as text.

    Args:
        k: passages per method; fetch_k: candidates over-fetched by similarity
            (None: 20, or k if larger; a given fetch_k below k is refused).
        lambda_mult: MMR's trade-off (1 = relevance only); theta: DPP's (-> 1 relevance).
        embeddings: a LangChain ``Embeddings`` to use instead of the cached bundled model.

    Raises:
        ValueError: naming the argument, for an empty query, bad k/fetch_k or options.
    """
    import numpy as np
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_core import DEFAULT_METHOD, MethodName, check_count, check_options, metrics
    from vrsd_eval.disk_embeddings import cached_embeddings, model_label
    from vrsd_langchain import DiverseRetriever

    asked = query
    query = DEFAULT_QUERY if query is None else query
    if not query.strip():
        raise ValueError("query: empty")
    k = check_count(k, "k", minimum=1)
    if fetch_k is None:
        fetch_k = max(DEFAULT_FETCH_K, k)
    fetch_k = check_count(fetch_k, "fetch_k", minimum=1)
    if fetch_k < k:
        raise ValueError(f"fetch_k: {fetch_k} is smaller than k ({k})")
    # option values now, said plainly (not as a retriever's validation error later)
    check_options("mmr", {"lambda_mult": lambda_mult})
    check_options("dpp", {"theta": theta})
    passages = load_corpus(corpus_path)
    emb = embeddings if embeddings is not None else cached_embeddings(model, cache_dir)
    ids = [p.id for p in passages]
    store = InMemoryVectorStore(emb)
    store.add_texts([p.text for p in passages], ids=ids)
    vectors = {pid: store.store[pid]["vector"] for pid in ids}  # as embedded for the store
    query_vec = np.asarray(emb.embed_query(query))
    fetch = fetch_k
    methods: list[tuple[str, MethodName, dict[str, Any], str]] = [
        (f"default: {DEFAULT_METHOD}", DEFAULT_METHOD, {}, "DiverseRetriever() as it comes"),
        ("similarity", "similarity", {}, "plain top-k by cosine"),
        ("vrsd", "vrsd", {}, "the paper's greedy sum-vector search"),
        ("mmr", "mmr", {"lambda_mult": lambda_mult}, f"lambda_mult={lambda_mult}"),
        ("dpp", "dpp", {"theta": theta}, f"theta={theta}"),
    ]
    width = report_width()
    builtin = corpus_path is None
    label = model_label(model) if embeddings is None else type(emb).__name__
    retrievers = [
        (name, about, DiverseRetriever(vectorstore=store, k=k, fetch_k=fetch, method=method,
                                    method_kwargs=options))
        for name, method, options, about in methods
    ]
    out: list[str] = []
    if builtin and asked is None:  # the whole picture first: every built-in question
        out += _overview(retrievers, min(k, len(passages)), width)
        out.append("")
    about_corpus = (
        f"Corpus: {'built-in, ' if builtin else ''}{len(passages)} passages"
        + (" (ids ending in a, b, c are paraphrases of one fact)" if builtin else "")
        + f"; model {label}. Each method picks k={min(k, len(passages))} of the "
        f"{min(fetch, len(passages))} passages most similar to the query. Sim. = cos(sum of "
        "the set, query), higher is more relevant as a whole; Div. = mean pairwise cosine, "
        "lower is more diverse."
    )
    out += [f"Query: {query}", textwrap.fill(about_corpus, width=width, break_on_hyphens=False)]
    for name, about, retriever in retrievers:
        docs = retriever.invoke(query)
        ids = [d.id or "" for d in docs]  # InMemoryVectorStore keeps the ids it was given
        picked = np.asarray([vectors[i] for i in ids])
        sim = metrics.sum_vector_similarity(query_vec, picked)
        div = metrics.intra_list_similarity(picked)
        facts = len({fact_of(i) for i in ids})
        repeats = paraphrase_pairs(ids)
        stats = (f"Sim. {sim:.3f}  Div. {div:.3f}  {facts}/{len(docs)} facts, {repeats} "
                 f"repeat{'s' if repeats != 1 else ''}")
        out += ["", *_header(name, about, stats, width)]
        for rank, (pid, d) in enumerate(zip(ids, docs, strict=True), 1):
            out += _passage(rank, pid, d.metadata["vrsd"]["relevance"], d.page_content, width)
            for entry in d.metadata["vrsd"].get("held_back", ()):
                out += _held_line(entry, pid, width)
    out += [
        "",
        textwrap.fill(
            "'facts' counts distinct facts: paraphrases of one fact count once; 'repeats' "
            "counts pairs of picks that state the same fact. Under a default pick, 'held "
            "back' names what plain top-k (by the same relevance) would have returned: "
            "'restates' when 90% or more of its word pairs are in that pick, 'made room "
            "for' when that pick took its slot (a paraphrase uses other words, so it is "
            "'made room for'). Try your own question:",
            width=width,
        ),
        '  vrsd demo "how do oceans affect the climate?" --k 6',
    ]
    return "\n".join(out)
