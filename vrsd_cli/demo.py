"""``vrsd demo``: what the default does for a RAG pipeline, on a folder as real folders are.

The built-in folder (``data/demo_folder.txt``) is the documentation of Kestrel, a
made-up job scheduler: 57 chunks of 27 files, written for vrsd, with the near-copies
real folders hold (the same page in two files, a page split into overlapping chunks
with a sentence of it quoted elsewhere, a disclaimer under every policy chunk) and
passages that say one fact twice in other words. Each chunk is labelled with the facts
it states. Its 22 questions (``data/demo_questions.txt``) each name the facts they need:
questions on the copies, two-step questions (the first passage names a bridge the
question does not contain; the second is about it) and questions on the paraphrases.

The first screen is one table over all the questions: facts found, repeats returned
(picks that state nothing beyond the picks above them) and two-step evidence found, for
plain top-k and for the default (``DiverseRetriever()`` as it comes), one row per kind
of question, and a line on where MMR or DPP does better. Then one question in detail:
what top-k, the default, VRSD, MMR and DPP return, and what the default held back.

Everything is offline: the bundled all-MiniLM-L6-v2, an ``InMemoryVectorStore``, one
``DiverseRetriever`` per method. Embeddings are cached on disk (``disk_embeddings``), so
a second run skips encoding. ``--corpus`` takes a file of ``<id> | <text>`` lines
instead (ids ending in a, b, c: paraphrases of one fact, as in ``data/demo_corpus.txt``,
the paraphrase corpus the inspection's checks use).
"""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vrsd_kit.settings import DEFAULT_FETCH_K

from .printing import link_lines

if TYPE_CHECKING:
    from vrsd_core import MethodName

DEFAULT_QUERY = "How do I install Kestrel and start it?"
"""The question shown in detail after the table (one of the built-in ones)."""
# Ordinary questions on the paraphrase corpus (data/demo_corpus.txt), written after the
# default's rule was fixed and never used to choose it; the inspection's checks ask them.
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
DEFAULT_K = 4  # DiverseRetriever()'s own k and fetch_k: the default as it comes
KINDS = ("copied page", "chunk overlap", "disclaimer", "two-step", "paraphrase")
"""The kinds of built-in question, in the table's order."""


def report_width() -> int:
    """The terminal's width (``$COLUMNS`` when set, else the terminal's, else 100),
    kept within [60, 100]: whole passages wrap to it, and wider lines read badly."""
    columns = shutil.get_terminal_size((WIDTH, 24)).columns
    return max(MIN_WIDTH, min(WIDTH, columns))


@dataclass(frozen=True)
class Passage:
    """One passage: an id, its text, the file it comes from and the facts it states
    (for a ``<id> | <text>`` corpus: its id without a paraphrase letter)."""

    id: str
    text: str
    source: str | None = None
    facts: tuple[str, ...] = ()

    @property
    def states(self) -> frozenset[str]:
        """The facts it states."""
        return frozenset(self.facts or (fact_of(self.id),))


@dataclass(frozen=True)
class Question:
    """A built-in question: its kind, its text, the facts it needs and, for a two-step
    question, its chain (the first passage's fact, the second's)."""

    kind: str
    text: str
    needs: tuple[str, ...]
    chain: tuple[str, str] | None = None


def _lines(text: str) -> list[tuple[int, list[str]]]:
    """(line number, its ``|`` fields) of the data lines (comments and blanks skipped)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            out.append((n, [part.strip() for part in line.split("|")]))
    return out


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


def _data(name: str) -> str:
    return resources.files("vrsd_cli").joinpath(f"data/{name}").read_text(encoding="utf-8")


def load_corpus(path: str | os.PathLike[str] | None = None) -> list[Passage]:
    """The paraphrase corpus (``data/demo_corpus.txt``: 67 passages on eight topics,
    ids ending in a, b, c are paraphrases of one fact), or the ``<id> | <text>`` file at
    ``path``."""
    if path is None:
        return read_corpus(_data("demo_corpus.txt"), "demo_corpus.txt")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"corpus: cannot read {path}: {exc}") from None
    return read_corpus(text, str(path))


def load_folder() -> list[Passage]:
    """The built-in folder: every chunk with its file and the facts it states."""
    out = []
    for n, fields in _lines(_data("demo_folder.txt")):
        if len(fields) != 4 or not all(fields):
            raise ValueError(f"corpus: demo_folder.txt line {n}: expected "
                             "'<id> | <file> | <facts> | <text>'")
        pid, source, facts, text = fields
        out.append(Passage(pid, text, source, tuple(f.strip() for f in facts.split(","))))
    return out


def load_questions() -> list[Question]:
    """The built-in questions, each with the facts it needs (all of them stated in the
    folder)."""
    stated = {f for p in load_folder() for f in p.facts}
    out = []
    for n, (kind, needs, text) in _lines(_data("demo_questions.txt")):
        chain: tuple[str, str] | None = None
        facts: tuple[str, ...]
        if ">" in needs:
            first, second = (f.strip() for f in needs.split(">"))
            chain = facts = (first, second)
        else:
            facts = tuple(f.strip() for f in needs.split(","))
        unknown = sorted(set(facts) - stated)
        if kind not in KINDS or unknown:
            what = f"kind {kind!r}" if kind not in KINDS else f"facts {unknown}"
            raise ValueError(f"corpus: demo_questions.txt line {n}: unknown {what}")
        out.append(Question(kind, text, facts, chain))
    return out


def fact_of(passage_id: str) -> str:
    """The fact a paraphrase-corpus passage states: its id without a trailing letter."""
    return re.sub(r"(?<=\d)[a-z]$", "", passage_id)


def paraphrase_pairs(ids: list[str]) -> int:
    """How many pairs of ``ids`` state the same fact (paraphrases of each other)."""
    facts = [fact_of(i) for i in ids]
    return sum(facts[a] == facts[b] for a in range(len(facts)) for b in range(a + 1, len(facts)))


def repeats(picks: Sequence[Passage]) -> int:
    """Picks that state no fact beyond the picks above them (a copy, a chunk inside
    another, a paraphrase)."""
    seen: set[str] = set()
    count = 0
    for p in picks:
        count += p.states <= seen
        seen |= p.states
    return count


@dataclass
class Tally:
    """One method's counts over a set of questions."""

    questions: int = 0
    needed: int = 0
    found: int = 0
    repeats: int = 0
    chains: int = 0
    chains_found: int = 0
    per_question: list[int] = field(default_factory=list)

    def add(self, question: Question, picks: Sequence[Passage]) -> None:
        stated = set().union(*(p.states for p in picks))
        found = len(set(question.needs) & stated)
        self.questions += 1
        self.needed += len(question.needs)
        self.found += found
        self.repeats += repeats(picks)
        self.per_question.append(found)
        if question.chain is not None:
            self.chains += 1
            self.chains_found += set(question.chain) <= stated


@dataclass(frozen=True)
class Method:
    """A row of the detail: its name, method, options and what it is."""

    name: str
    method: MethodName
    options: dict[str, Any]
    about: str


def _methods(lambda_mult: float, theta: float) -> list[Method]:
    from vrsd_core import DEFAULT_METHOD

    return [
        Method(f"default: {DEFAULT_METHOD}", DEFAULT_METHOD, {},
               "DiverseRetriever() as it comes"),
        Method("similarity", "similarity", {}, "plain top-k by cosine"),
        Method("vrsd", "vrsd", {}, "the paper's greedy sum-vector search"),
        Method("mmr", "mmr", {"lambda_mult": lambda_mult}, f"lambda_mult={lambda_mult}"),
        Method("dpp", "dpp", {"theta": theta}, f"theta={theta}"),
    ]


def tallies(retrievers: dict[str, Any], passages: Sequence[Passage],
            questions: Sequence[Question]) -> dict[str, dict[str, Tally]]:
    """{method name: {kind: Tally, ..., "all": Tally}} over ``questions``."""
    by_id = {p.id: p for p in passages}
    out: dict[str, dict[str, Tally]] = {}
    for name, retriever in retrievers.items():
        table = {kind: Tally() for kind in (*KINDS, "all")}
        for q in questions:
            picks = [by_id[d.id] for d in retriever.invoke(q.text)]
            table[q.kind].add(q, picks)
            table["all"].add(q, picks)
        out[name] = table
    return out


def _cell(a: int, b: int | None = None) -> str:
    return str(a) if b is None else f"{a}/{b}"


def _overview(found: dict[str, dict[str, Tally]], questions: Sequence[Question], k: int,
              fetch_k: int, passages: int, files: int, default: str, width: int
              ) -> list[str]:
    """The first screen: top-k against the default on every built-in question
    (``questions``, in the tallies' order), one row per kind, the questions where the
    default found fewer facts than top-k, and where MMR or DPP does better."""
    top, ours = found["similarity"], found[default]
    total = ours["all"]
    lines = textwrap.wrap(
        f"vrsd demo: {total.questions} questions on a made-up project's documentation "
        f"folder ({passages} chunks of {files} files, with the copies real folders hold). "
        f"Plain top-k against the default (DiverseRetriever() as it comes: k={k} of "
        f"fetch_k={fetch_k}), the bundled model. {FOR}", width=width,
        break_on_hyphens=False)
    head = f"{'':<14}{'':>3}{'facts found':^14}{'repeats':^14}{'two-step':^14}"
    sub = f"{'question kind':<14}{'n':>3}" + f"{'top-k':>6}{'default':>8}" * 3
    lines += ["", head.rstrip(), sub]
    for kind in (*KINDS, "all"):
        a, b = top[kind], ours[kind]
        if not a.questions:
            continue
        chains = (f"{_cell(a.chains_found, a.chains):>6}{_cell(b.chains_found, b.chains):>8}"
                  if a.chains else f"{'-':>6}{'-':>8}")
        lines.append(f"{kind:<14}{a.questions:>3}"
                     f"{_cell(a.found, a.needed):>6}{_cell(b.found, b.needed):>8}"
                     f"{a.repeats:>6}{b.repeats:>8}{chains}")
    fewer = [q.text for q, o, t in zip(questions, total.per_question,
                                       top["all"].per_question, strict=True) if o < t]
    lines.append("")
    everything = top["all"]
    lines += textwrap.wrap(
        f"The default found {total.found} of the {total.needed} facts (top-k "
        f"{everything.found}), returned {total.repeats} repeat{'s' if total.repeats != 1 else ''}"
        f" (top-k {everything.repeats}) "
        f"and found both steps of {total.chains_found} of {total.chains} two-step "
        f"questions (top-k {everything.chains_found}); it found fewer facts than top-k on "
        f"{len(fewer)} question{'s' if len(fewer) != 1 else ''}{_named(fewer)}. Facts found: "
        "the facts each question "
        "needs, found among the k passages; repeats: passages that state nothing beyond "
        "the ones above them (a copy, a chunk inside another, a paraphrase); two-step: "
        "both passages of a chain found.", width=width, break_on_hyphens=False)
    why = _why_top_k_finds_more(top, ours)
    if why:
        lines += ["", *textwrap.wrap(why, width=width, break_on_hyphens=False)]
    lines += ["", *textwrap.wrap(_peers_line(found, default), width=width,
                                 break_on_hyphens=False)]
    return lines


FOR = ("The default is for the passages a RAG pipeline hands its LLM: of those a question "
       "fetches, it keeps the k that are relevant and say different things, so a copy does "
       "not take the slot of a fact the answer needs.")
"""What the default is for, in one sentence: the first screen's first paragraph."""
# Why plain top-k can find more facts on a kind of question, where the folder says why.
_TOP_K_FINDS_MORE = {
    "copied page": "there one chunk states two of the facts asked and top-k returns it "
                   "together with its copy; the default keeps at most one of the two, so when "
                   "the question's words lift other passages above that chunk, two facts go "
                   "at once",
}


def _why_top_k_finds_more(top: dict[str, Tally], ours: dict[str, Tally]) -> str:
    """A sentence per kind of question where top-k found more facts than the default and
    ``_TOP_K_FINDS_MORE`` says why ('' for none)."""
    said = [f"Top-k finds more facts on {kind} questions ({top[kind].found}/"
            f"{top[kind].needed}, the default {ours[kind].found}/{ours[kind].needed}): {why}."
            for kind, why in _TOP_K_FINDS_MORE.items()
            if top[kind].questions and top[kind].found > ours[kind].found]
    return " ".join(said)


def _named(questions: Sequence[str]) -> str:
    """``questions`` quoted after a colon, for the first screen ('' for none): a reader
    can ask each one (``vrsd demo "<question>"``) to see the picks."""
    if not questions:
        return ""
    quoted = [f'"{text}"' for text in questions]
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"
    return f": {listed} (vrsd demo \"<question>\" shows one in detail)"


def _peers_line(found: dict[str, dict[str, Tally]], default: str) -> str:
    """Where MMR or DPP does better than the default, row by row, from the run."""
    ours = found[default]
    better = []
    for name in ("mmr", "dpp"):
        theirs = found[name]
        for kind in (*KINDS,):
            a, b = theirs[kind], ours[kind]
            if not a.questions:
                continue
            if a.found > b.found:
                better.append(f"{name.upper()} finds {a.found}/{a.needed} facts on {kind} "
                              f"questions (the default {b.found})")
            if a.repeats < b.repeats:
                better.append(f"{name.upper()} returns {a.repeats} repeat"
                              f"{'' if a.repeats == 1 else 's'} on {kind} "
                              f"questions (the default {b.repeats})")
            if a.chains_found > b.chains_found:
                better.append(f"{name.upper()} finds both steps of {a.chains_found} "
                              f"two-step questions (the default {b.chains_found})")
    totals = "; ".join(
        f"{name.upper()} {found[name]['all'].found} facts, repeats "
        f"{found[name]['all'].repeats}, two-step {found[name]['all'].chains_found}"
        for name in ("mmr", "dpp"))
    if not better:
        return (f"MMR and DPP do no better than the default on any row (over all: "
                f"{totals}).")
    return f"Where MMR or DPP does better: {'; '.join(better)}. Over all: {totals}."


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
    top-k by the default's relevance, the retriever's relation (a copy: "restates" or
    "contains" the pick; else the pick "took its place"), and its start."""
    relation = entry["relation"]
    if relation in ("restates", "contains"):
        share = entry.get("share")
        why = f"{relation} {pick}" + ("" if share is None else f" (share {share:.2f})")
    else:
        why = f"{pick} took its place"
    head = f"      held back: {entry['id']} (#{entry['rank']} by relevance), {why}: "
    return textwrap.wrap(f"{head}{entry.get('excerpt', '')}", width=width,
                         subsequent_indent=" " * 17, break_on_hyphens=False)


@dataclass
class DemoStore:
    """The demo's passages in an ``InMemoryVectorStore``, with one ``DiverseRetriever``
    per method and the vectors as the store keeps them."""

    passages: list[Passage]
    store: Any
    embeddings: Any
    retrievers: dict[str, Any]
    methods: list[Method]

    @property
    def vectors(self) -> dict[str, Any]:
        return {p.id: self.store.store[p.id]["vector"] for p in self.passages}


def build_store(passages: list[Passage], *, k: int, fetch_k: int, lambda_mult: float = 0.5,
                theta: float = 0.5, model: str | None = None,
                cache_dir: str | os.PathLike[str] | None = None,
                embeddings: Any = None) -> DemoStore:
    """``passages`` embedded in an in-memory store (metadata ``source``: their file), and a
    ``DiverseRetriever`` at ``k`` of ``fetch_k`` for each method."""
    from langchain_core.vectorstores import InMemoryVectorStore

    from vrsd_eval.disk_embeddings import cached_embeddings
    from vrsd_langchain import DiverseRetriever

    emb = embeddings if embeddings is not None else cached_embeddings(model, cache_dir)
    store = InMemoryVectorStore(emb)
    store.add_texts([p.text for p in passages], ids=[p.id for p in passages],
                    metadatas=[{} if p.source is None else {"source": p.source}
                               for p in passages])
    methods = _methods(lambda_mult, theta)
    retrievers = {m.name: DiverseRetriever(vectorstore=store, k=k, fetch_k=fetch_k,
                                           method=m.method, method_kwargs=m.options)
                  for m in methods}
    return DemoStore(passages, store, emb, retrievers, methods)


def folder_figures(k: int = DEFAULT_K, fetch_k: int = DEFAULT_FETCH_K, *,
                   model: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
                   lambda_mult: float = 0.5, theta: float = 0.5,
                   ) -> dict[str, dict[str, Tally]]:
    """The first screen's counts, per method and kind of question, on the built-in
    folder (what ``benchmarks/demo_table.py`` writes to docs/results/demo.json)."""
    passages = load_folder()
    demo = build_store(passages, k=k, fetch_k=fetch_k, lambda_mult=lambda_mult,
                       theta=theta, model=model, cache_dir=cache_dir)
    shown = {name: r for name, r in demo.retrievers.items() if name != "vrsd"}
    return tallies(shown, passages, load_questions())


def _checked(k: int, fetch_k: int | None, lambda_mult: float, theta: float
             ) -> tuple[int, int]:
    from vrsd_core import check_count, check_options

    k = check_count(k, "k", minimum=1)
    if fetch_k is None:
        fetch_k = max(DEFAULT_FETCH_K, k)
    fetch_k = check_count(fetch_k, "fetch_k", minimum=1)
    if fetch_k < k:
        raise ValueError(f"fetch_k: {fetch_k} is smaller than k ({k})")
    # option values now, said plainly (not as a retriever's validation error later)
    check_options("mmr", {"lambda_mult": lambda_mult})
    check_options("dpp", {"theta": theta})
    return k, fetch_k


def run_demo(
    query: str | None = None,
    *,
    k: int = DEFAULT_K,
    fetch_k: int | None = None,
    lambda_mult: float = 0.5,
    theta: float = 0.5,
    corpus_path: str | os.PathLike[str] | None = None,
    model: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    embeddings: Any = None,
) -> str:
    """The demo's report, as text: with no ``query`` on the built-in folder, the table
    over every built-in question, then ``DEFAULT_QUERY`` in detail; else ``query`` in
    detail.

    Args:
        k: passages per method (4, as ``DiverseRetriever()``); fetch_k: candidates
            over-fetched by similarity (None: ``DEFAULT_FETCH_K``, or k if larger; below k
            is refused).
        lambda_mult: MMR's trade-off (1 = relevance only); theta: DPP's (-> 1 relevance).
        corpus_path: a ``<id> | <text>`` file instead of the built-in folder.
        embeddings: a LangChain ``Embeddings`` to use instead of the cached bundled model.

    Raises:
        ValueError: naming the argument, for an empty query, bad k/fetch_k or options.
    """
    import numpy as np

    from vrsd_core import metrics
    from vrsd_eval.disk_embeddings import model_label

    asked = query
    query = DEFAULT_QUERY if query is None else query
    if not query.strip():
        raise ValueError("query: empty")
    k, fetch_k = _checked(k, fetch_k, lambda_mult, theta)
    builtin = corpus_path is None
    passages = load_folder() if builtin else load_corpus(corpus_path)
    demo = build_store(passages, k=k, fetch_k=fetch_k, lambda_mult=lambda_mult, theta=theta,
                       model=model, cache_dir=cache_dir, embeddings=embeddings)
    width = report_width()
    shown_k, shown_fetch = min(k, len(passages)), min(fetch_k, len(passages))
    out: list[str] = []
    if builtin and asked is None:  # the whole picture first: every built-in question
        shown = {name: r for name, r in demo.retrievers.items() if name != "vrsd"}
        questions = load_questions()
        found = tallies(shown, passages, questions)  # what the first screen shows
        out += _overview(found, questions, shown_k, shown_fetch, len(passages),
                         len({p.source for p in passages}), demo.methods[0].name, width)
        out += ["", "-" * width, ""]
    label = model_label(model) if embeddings is None else type(demo.embeddings).__name__
    about_corpus = (
        f"Corpus: {'the built-in folder, ' if builtin else ''}{len(passages)} passages"
        + (" (facts: the facts its passages state, by the folder's labels)" if builtin
           else " (ids ending in a, b, c are paraphrases of one fact)")
        + f"; model {label}. Each method picks k={shown_k} of the {shown_fetch} passages "
        "most similar to the query. Sim. = cos(sum of the set, query), higher is more "
        "relevant as a whole; Div. = mean pairwise cosine, lower is more diverse; repeats: "
        "picks that state no fact beyond the picks above them."
    )
    out += [*textwrap.wrap(f"Query: {query}", width=width, subsequent_indent="  ",
                           break_on_hyphens=False),
            textwrap.fill(about_corpus, width=width, break_on_hyphens=False)]
    by_id = {p.id: p for p in passages}
    vectors = demo.vectors
    query_vec = np.asarray(demo.embeddings.embed_query(query))
    for m in demo.methods:
        docs = demo.retrievers[m.name].invoke(query)
        ids = [d.id or "" for d in docs]  # InMemoryVectorStore keeps the ids it was given
        picks = [by_id[i] for i in ids]
        picked = np.asarray([vectors[i] for i in ids])
        sim = metrics.sum_vector_similarity(query_vec, picked)
        div = metrics.intra_list_similarity(picked)
        facts = len(set().union(*(p.states for p in picks)))
        repeated = repeats(picks)
        stats = (f"Sim. {sim:.3f}  Div. {div:.3f}  {facts} facts, {repeated} "
                 f"repeat{'s' if repeated != 1 else ''}")
        out += ["", *_header(m.name, m.about, stats, width)]
        for rank, (pid, d) in enumerate(zip(ids, docs, strict=True), 1):
            out += _passage(rank, pid, d.metadata["vrsd"]["relevance"], d.page_content, width)
            out += link_lines(d.metadata["vrsd"], " " * 6, width)
            for entry in d.metadata["vrsd"].get("held_back", ()):
                out += _held_line(entry, pid, width)
    out += [
        "",
        textwrap.fill(
            "'facts' counts the distinct facts the picks state (a copy or a paraphrase of "
            "a fact counts once); 'repeats' the picks that state nothing new. Under a "
            "default pick, 'held back' names what plain top-k by the default's relevance "
            "(the vectors and the words, fused: not the similarity row's cosine order) would "
            "have returned, and its place there ('#2 by relevance'): 'restates' when its "
            "content is in that pick, 'contains' when it holds that pick and a little more "
            "(a copy either way), 'took its place' when that pick adds more; 'linked to #n "
            "by' names the pick a link "
            "brought it in by, and the words both hold that the question does not. Try "
            "your own question:",
            width=width, break_on_hyphens=False,
        ),
        '  vrsd demo "how do I keep run logs for a year?" --k 6',
    ]
    return "\n".join(out)
