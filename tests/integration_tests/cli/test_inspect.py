"""``vrsd inspect`` and ``inspect_store`` on corpora whose answer is known (the demo's
labelled folder; the paraphrase corpus; a folder of READMEs split into consecutive
chunks; a 20-question slice of HotpotQA, plain, redundant and chunked), through
each framework's store, the HTML report parsed, and bad input: one line, never a
traceback."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from tests.helpers.fixtures import li_embed_model_fixture  # noqa: F401  (a fixture)
from vrsd_cli.inspection import inspect_store
from vrsd_cli.inspection.known import (
    agreement,
    demo_corpus,
    hotpotqa_corpora,
    paraphrase_corpus,
)
from vrsd_core import DEFAULT_METHOD, pool_units, select
from vrsd_kit.inspection import (
    CROWDED_RATE,
    Passage,
    crowded_slots,
    format_table,
    read_questions,
    render_html,
    write_html,
)
from vrsd_kit.lexical import pool_relevance, restated_by
from vrsd_kit.settings import DEFAULT_FETCH_K

HOTPOT_LIMIT = 20


@pytest.fixture(scope="module")
def demo():
    return demo_corpus()


@pytest.fixture(scope="module")
def demo_store(demo, embeddings):
    return demo.langchain_store(embeddings)


@pytest.fixture(scope="module")
def demo_found(demo_store):
    """Every demo passage asked as a question (itself left out), at the defaults."""
    return inspect_store(demo_store, sample=1000)


@pytest.fixture(scope="module")
def hotpot(embeddings):
    """(corpus, its inspection on its own questions) for HotpotQA plain, redundant and
    chunked."""
    out = {}
    for corpus in hotpotqa_corpora(HOTPOT_LIMIT):
        store = corpus.langchain_store(embeddings)
        out[corpus.name] = (corpus, store, inspect_store(store, corpus.questions))
    return out


# --- what it measures ------------------------------------------------------------------


def test_the_demo_folder_says_what_the_labels_say(demo, demo_found):
    """The demo's folder holds the copies real folders hold (the same page in two files,
    overlapping chunks, a quoted sentence): asked its own passages, every restatement
    the report names is one by the labels, and the crowding is the labels' own but for
    the paraphrases (which the words cannot see; measured 9.6 % against 13.6 %)."""
    assert len(demo_found.questions) == len(demo.ids)
    agree = agreement(demo_found, demo)
    assert agree.held_back > 5 and agree.precision == pytest.approx(1.0)
    assert 0.05 < demo_found.crowding_rate <= agree.labelled_rate
    # every crowded slot is a restatement (no cap set: a shared file is not crowding)
    assert {c.relation for q in demo_found.questions for c in q.crowded_slots} == {"restates"}


def test_the_demo_questions_read_crowded(demo_store, demo):
    """The demo's own questions at its settings (k=4 of the default fetch_k): crowded,
    and each crowded slot states nothing the passage it restates does not (by the
    labels)."""
    found = inspect_store(demo_store, demo.questions, k=4, fetch_k=DEFAULT_FETCH_K)
    assert found.crowded and found.verdict.startswith("top-k is crowded")
    for q in found.questions:
        for c in q.crowded_slots:
            this, above = q.repeats(c)
            assert demo.restates(this.passage.id, above.passage.id)


def test_paraphrases_are_not_crowding(embeddings):
    """The paraphrase corpus: a fact's paraphrases share a source and use other words.
    Sharing a source is not crowding, and the words do not call a paraphrase a
    restatement: clean, whatever the sources; with a cap of one passage per source, the
    same lists are crowded past the cap."""
    corpus = paraphrase_corpus()
    store = corpus.langchain_store(embeddings)
    found = inspect_store(store, corpus.questions, k=5)
    assert found.crowded_slots == 0 and not found.crowded
    assert found.distinct_sources() < 5  # top-k's lists do share sources
    capped = inspect_store(store, corpus.questions, k=5, max_per_group=1)
    over = [c for q in capped.questions for c in q.crowded_slots]
    assert over and {c.relation for c in over} == {"over the source cap"}
    for q in capped.questions:
        assert q.distinct_sources("default") == len(q.default)  # the default keeps the cap
        for c in q.crowded_slots:
            this, above = q.repeats(c)
            assert this.passage.source == above.passage.source
    assert capped.crowding_means.endswith("exceed 1 per source")
    with pytest.raises(ValueError, match=r"^max_per_group: "):
        inspect_store(store, corpus.questions, max_per_group=0)


def _readme_folder() -> list[tuple[str, str]]:
    """(file, chunk) of this repository's README and four docs pages, each split into
    consecutive chunks without overlap, as a user's folder of READMEs would be."""
    from pathlib import Path

    from langchain_text_splitters import RecursiveCharacterTextSplitter

    root = Path(__file__).resolve().parents[3]
    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=0)
    return [(page.name, chunk)
            for page in [root / "README.md", *(root / "docs" / f"{name}.md" for name in (
                "cli", "inspect", "methods", "stores"))]
            for chunk in splitter.split_text(page.read_text(encoding="utf-8"))]


def test_a_folder_of_readmes_in_consecutive_chunks_is_not_crowded(embeddings):
    """Consecutive chunks of one README share a source and are often where the answer
    is: not crowding. Asked a sample of its own chunks, top-k's lists take several chunks
    of one file, and the verdict is still "not crowded"."""
    from langchain_core.vectorstores import InMemoryVectorStore

    folder = _readme_folder()
    store = InMemoryVectorStore(embeddings)
    store.add_texts([text for _, text in folder], metadatas=[{"source": name}
                                                             for name, _ in folder])
    found = inspect_store(store, sample=60, seed=3)
    assert found.distinct_sources() < found.k - 1  # most lists from one or two files
    assert not found.crowded and found.verdict.startswith("top-k is not crowded")
    assert found.crowding_rate < CROWDED_RATE / 2


def test_crowded_slots_count_restatements_and_a_cap_only_when_set():
    """Hand-built lists: a chunk inside the one above it restates it; a neighbour from
    the same file does not, unless a cap is set."""
    page = ("Run logs are kept for thirty days and then deleted automatically; set "
            "log_days to keep them longer.")
    listed = [Passage("a", page, "retention.md"),
              Passage("b", "Only administrators can read the logs of other people's jobs.",
                      "retention.md"),
              Passage("c", page.split(";")[0], "faq.md"),
              Passage("d", "The dashboard shows the last hundred runs.", "retention.md")]
    assert [(c.rank, c.by, c.relation) for c in crowded_slots(listed)] == [(3, 1, "restates")]
    assert [(c.rank, c.by, c.relation) for c in crowded_slots(listed, max_per_group=2)] == [
        (3, 1, "restates"), (4, 1, "over the source cap")]
    assert crowded_slots(listed[:1]) == []


def test_hotpotqa_plain_and_chunked_are_clean_and_redundant_is_crowded(hotpot):
    """Plain: every paragraph once; redundant: plus a copy of each (first sentence
    dropped); chunked: paragraphs split with overlap, a chunk's source its paragraph's
    title. Chunks of one paragraph share a source but do not restate each other."""
    plain_corpus, _, plain = hotpot["plain"]
    redundant_corpus, _, redundant = hotpot["redundant"]
    _, _, chunked = hotpot["chunked"]
    assert redundant.crowded and not chunked.crowded and not plain.crowded
    assert redundant.crowding_rate >= CROWDED_RATE
    assert max(plain.crowding_rate, chunked.crowding_rate) < 0.05
    assert chunked.distinct_sources() < plain.distinct_sources()
    assert redundant.verdict.startswith("top-k is crowded")
    assert plain.verdict.startswith("top-k is not crowded")
    # by the labels no plain passage restates another; what the report says restates
    # on the redundant corpus is a paragraph's own chunk (or the paragraph)
    assert agreement(plain, plain_corpus).labelled == 0
    assert agreement(redundant, redundant_corpus).held_back > 5
    assert agreement(redundant, redundant_corpus).precision >= 0.95
    # a paragraph and its chunk share a title: top-k's lists take two from one source
    assert redundant.source_concentration() > plain.source_concentration() == 0.25
    assert redundant.source_concentration("default") < redundant.source_concentration()
    assert redundant.distinct_sources("default") > redundant.distinct_sources()
    assert redundant.sources_gained > 0


def test_a_sample_of_the_store_tells_them_apart_too(hotpot):
    found = {name: inspect_store(store, sample=30, seed=1)
             for name, (_, store, _) in hotpot.items()}
    assert found["redundant"].crowded and not found["plain"].crowded
    assert all(len(f.questions) == 30 for f in found.values())


def test_each_figure_is_the_selections_on_the_same_candidates(demo_store, demo_found,
                                                            embeddings):
    for q in demo_found.questions:
        top = [r.passage.id for r in q.top_k]
        kept = [r.passage.id for r in q.default]
        assert len(top) == len(kept) == demo_found.k == 4
        # the held-back slots are exactly the top-k passages the default does not return
        assert {top[h.rank - 1] for h in q.held_back} == set(top) - set(kept)
        assert q.slots_changed == len(set(kept) - set(top))
        # each restates a kept passage (most of its word pairs are in it) or made room
        # for a passage top-k did not have
        for h in q.held_back:
            gone, kept_one = q.pair(h)
            if h.relation == "restates":
                assert restated_by(gone.passage.text, [kept_one.passage.text])[0] == 0
            elif h.relation == "contains":  # the kept passage is a piece of it
                assert kept_one.passage.id in kept
            else:
                assert h.relation == "displaced" and kept_one.passage.id not in top
        # a crowded slot restates a passage above it, by the judge the explanation uses
        for c in q.crowded_slots:
            this, above = q.repeats(c)
            assert c.by < c.rank and c.relation == "restates"
            assert restated_by(this.passage.text, [above.passage.text])[0] == 0
        # the question's own passage is never among its candidates
        assert q.own is not None and q.own.id not in top + kept
        assert q.question == q.own.text
    crowded = sum(len(q.crowded_slots) for q in demo_found.questions)
    n = len(demo_found.questions)
    assert demo_found.crowding_rate == pytest.approx(crowded / (4 * n))
    assert demo_found.crowded_share == pytest.approx(
        np.mean([q.crowded for q in demo_found.questions]))
    # questions by 0 .. k - 1 crowded slots: the first slot has nothing above it
    assert len(demo_found.distribution()) == 4 and sum(demo_found.distribution()) == n


def test_a_question_of_the_users_is_the_cores_top_k_and_default(demo_store, embeddings):
    question = "How long are run logs kept?"
    found = inspect_store(demo_store, [question], k=5, fetch_k=12)
    (q,) = found.questions
    assert q.own is None and (found.k, found.fetch_k) == (5, 12)
    hits = demo_store.similarity_search_with_score_by_vector(
        embeddings.embed_query(question), k=12)
    ids = [doc.id for doc, _ in hits]
    cands = np.asarray([demo_store.store[i]["vector"] for i in ids])
    qvec = np.asarray(embeddings.embed_query(question))
    top = select(qvec, cands, 5, method="similarity")
    texts = [demo_store.store[i]["text"] for i in ids]
    words = pool_relevance(question, texts, qvec, cands)
    chosen = select(qvec, cands, 5, method=DEFAULT_METHOD, relevance=pool_units(words.signals),
                    profiles=words.profiles)
    assert [r.passage.id for r in q.top_k] == [ids[i] for i in top.indices]
    assert [r.passage.id for r in q.default] == [ids[i] for i in chosen.indices]
    assert {q.top_k[h.rank - 1].passage.id for h in q.held_back} == {
        ids[i] for i in top.indices} - {ids[i] for i in chosen.indices}
    assert [r.relevance for r in q.top_k] == pytest.approx(top.relevance.tolist())


@pytest.mark.parametrize("width", [60, 100])
def test_the_terminal_table(demo_found, width):
    table = format_table(demo_found, show=3, width=width)
    assert "crowding rate" in table and "distinct sources" in table
    assert f"verdict: {demo_found.verdict}" in " ".join(table.split())
    assert table.count(" restates ") >= 3
    assert all(len(line) <= width for line in table.splitlines())
    # every crowded slot's line names both passages whole, never cut mid-name
    flat = " ".join(table.split())
    for q in demo_found.most_crowded(3):
        for c in q.crowded_slots:
            this, above = q.repeats(c)
            assert (f"#{c.rank} {this.passage.label} restates #{c.by} {above.passage.label}"
                    in flat)


def _linked(found):
    """(question, 1-based rank, pick) of every default pick a link brought in."""
    return [(q, rank, r) for q in found.questions for rank, r in enumerate(q.default, 1)
            if r.link]


def test_the_report_says_which_pick_a_link_brought_in(demo_found, tmp_path):
    """As ``vrsd search`` says it: under the default's pick, "linked to #1 by: <words>",
    the words in both texts and not in the question; a pick no link brought in says
    nothing."""
    from vrsd_kit.lexical import tokenize

    linked = _linked(demo_found)
    assert linked  # the demo folder's chains: a passage naming a bridge, one about it
    for q, rank, r in linked:
        m = re.fullmatch(r"linked to #(\d+) by: (.+)", r.link)
        assert m and int(m[1]) < rank, r.link
        earlier = q.default[int(m[1]) - 1].passage
        for phrase in m[2].split(", "):
            words = set(tokenize(phrase))
            assert words and words <= set(tokenize(r.passage.text)) & set(
                tokenize(earlier.text)), (r.link, r.passage.id, earlier.id)
            assert not words & set(tokenize(q.question)), (r.link, q.question)
    table = format_table(demo_found, show=len(demo_found.questions), width=100)
    flat = " ".join(table.split())
    for _, rank, r in linked:
        assert f"#{rank} {r.passage.label} {r.link}" in flat
    assert flat.count("linked to #") == len(linked)  # nothing for the other picks
    shown = demo_found.most_crowded(len(demo_found.questions))
    page = _Report()
    page.feed(render_html(demo_found, show=len(demo_found.questions)))
    assert len(page.classes.get("linked", [])) == sum(bool(r.link) for q in shown
                                                       for r in q.default)


def test_a_long_name_is_never_cut():
    """A name longer than the line stands whole on a line of its own."""
    from vrsd_kit.inspection import Inspection, QuestionFigures, Ranked

    name = "a/very/long/folder/" * 6 + "README.md (chunk 2 of 9)"
    text = "Install the package with pip and run the command once."
    first, second = Passage("1", text, name=name), Passage("2", text, name=name + "x")
    q = QuestionFigures("how do I install it?", [Ranked(first, 0.9), Ranked(second, 0.8)],
                        [Ranked(first, 0.9)], [],
                        crowded_slots=crowded_slots([first, second]))
    table = format_table(Inspection("a store", "given", 2, 20, [q]), width=60)
    lines = table.splitlines()
    assert any(line.strip() == f"#1 {name}" for line in lines), table  # whole, alone
    assert any(name + "x" in line for line in lines)


# --- the HTML report -------------------------------------------------------------------


class _Report(HTMLParser):
    """What the report's HTML holds: elements by class, the figures, the images, links."""

    def __init__(self) -> None:
        super().__init__()
        self.classes: dict[str, list[dict[str, str | None]]] = {}
        self.figures: dict[str, str | None] = {}
        self.images: list[str] = []
        self.urls: list[str] = []
        self.verdict: dict[str, str | None] = {}
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for css in (a.get("class") or "").split():
            self.classes.setdefault(css, []).append(a)
        if "data-figure" in a:
            self.figures[a["data-figure"] or ""] = a.get("data-value")
        if tag == "img":
            self.images.append(a.get("src") or "")
        self.urls += [v for k, v in a.items() if k in ("href", "src") and v]
        if a.get("id") == "verdict":
            self.verdict = a

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_html_report_is_self_contained_and_says_what_it_found(demo_found, tmp_path):
    path = write_html(demo_found, tmp_path / "sub" / "report.html", show=4)
    page = _Report()
    page.feed(path.read_text(encoding="utf-8"))
    # no network: one image, embedded; no other link
    (image,) = page.images
    assert image.startswith("data:image/png;base64,")
    assert base64.b64decode(image.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.urls == [image]
    # the verdict and the figures, as computed
    assert page.verdict["data-crowded"] == str(demo_found.crowded).lower()
    text = " ".join(" ".join(page.text).split())
    assert demo_found.verdict in text
    assert float(page.figures["crowding-rate"] or 0) == pytest.approx(
        demo_found.crowding_rate, abs=1e-5)
    assert float(page.figures["crowded-questions"] or 0) == pytest.approx(
        demo_found.crowded_share, abs=1e-5)
    # the most crowded questions, side by side: k passages a side; every held-back one
    # names the kept passage it restates, and the default's replacements are marked
    sections = page.classes["question"]
    assert len(sections) == 4
    expected = demo_found.most_crowded(4)
    assert [int(s["data-crowded"] or 0) for s in sections] == [
        len(q.crowded_slots) for q in expected]
    assert [int(s["data-held-back"] or 0) for s in sections] == [
        q.slots_changed for q in expected]
    held = page.classes["held-back"]
    assert len(held) == sum(q.slots_changed for q in expected)
    assert len(page.classes["new"]) == len(held)
    assert len(page.classes["restates"]) == len(held)
    first = expected[0]
    for h in first.held_back:
        gone, kept = first.pair(h)
        why = "restates" if h.relation == "restates" else "made room for"
        assert f"{why} #{h.kept} of the default ({kept.passage.label})" in text
        assert gone.passage.text in text


def test_the_html_report_without_sources_or_crowding(demo_store):
    found = inspect_store(demo_store, ["Who chairs Tern?"], source=None)
    page = _Report()
    page.feed(render_html(found))
    assert page.figures["distinct-sources"] is None  # said n/a, no number
    assert found.distinct_sources() is None and found.sources_gained is None
    if not found.crowded:
        assert "question" not in page.classes


# --- the other frameworks' stores ------------------------------------------------------


def _held(found):
    """Per question, each held-back passage (by its text: the same page in two files
    ties, and stores break exact ties their own way), its rank, the kept rank, why."""
    return [[(r.passage.text, h.rank, h.kept, h.relation) for h in q.held_back
             for r in [q.top_k[h.rank - 1]]] for q in found.questions]


def test_a_haystack_store_gives_the_same_report(demo, embeddings, demo_found):
    from haystack import Document
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents([
        Document(id=pid, content=text, embedding=vec, meta={"source": src})
        for pid, text, src, vec in zip(demo.ids, demo.texts, demo.sources,
                                       embeddings.embed_documents(demo.texts), strict=True)])
    found = inspect_store(store, sample=1000, embedder=embeddings.embed_query)
    assert (found.k, found.fetch_k, len(found.questions)) == (4, DEFAULT_FETCH_K, len(demo.ids))
    assert _held(found) == _held(demo_found)
    assert found.crowding_rate == pytest.approx(demo_found.crowding_rate)
    # the pipeline's retriever: its top_k is fetch_k; without embeddings, one clear error
    retriever = InMemoryEmbeddingRetriever(store, top_k=12, return_embedding=True)
    assert inspect_store(retriever, ["Who chairs Tern?"], embedder=embeddings.embed_query
                         ).fetch_k == 12
    with pytest.raises(ValueError, match=r"^store: .*without their embeddings"):
        inspect_store(InMemoryEmbeddingRetriever(store), ["Who chairs Tern?"],
                      embedder=embeddings.embed_query)
    with pytest.raises(ValueError, match=r"^embedder: a Haystack store needs"):
        inspect_store(store)


def test_a_llamaindex_index_gives_the_same_report(demo, li_embed_model, demo_found):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    # the source stays out of the embedded text, as the LangChain store's does
    nodes = [TextNode(id_=pid, text=text, metadata={"source": src},
                      excluded_embed_metadata_keys=["source"])
             for pid, text, src in zip(demo.ids, demo.texts, demo.sources, strict=True)]
    index = VectorStoreIndex(nodes, embed_model=li_embed_model)
    found = inspect_store(index, sample=1000)
    assert (found.k, found.fetch_k, len(found.questions)) == (4, DEFAULT_FETCH_K, len(demo.ids))
    # the same model through another framework: the same held-back passages
    # (floats may differ in the last bits, so allow a near-tie to go the other way)
    same = sum(a == b for a, b in zip(_held(found), _held(demo_found), strict=True))
    assert same >= len(demo.ids) - 3
    assert found.crowding_rate == pytest.approx(demo_found.crowding_rate, abs=0.02)


def test_a_vrsd_retriever_brings_its_k_and_fetch_k(demo_store):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=demo_store, k=3, fetch_k=9)
    found = inspect_store(retriever, ["Who chairs Tern?"])
    assert (found.k, found.fetch_k) == (3, 9)
    assert inspect_store(retriever, ["Who chairs Tern?"], k=5, fetch_k=15).k == 5
    more = DEFAULT_FETCH_K + 5  # more than the default fetch_k: fetch_k is raised to k
    assert inspect_store(demo_store, ["Who chairs Tern?"], k=more).fetch_k == more


# --- bad input: one clear error naming the argument ------------------------------------


def test_bad_python_input_is_a_value_error_naming_the_argument(demo_store, embeddings):
    from langchain_core.vectorstores import InMemoryVectorStore

    empty = InMemoryVectorStore(embeddings)
    with pytest.raises(ValueError, match=r"^store: InMemoryVectorStore \(LangChain\) holds "
                                         "no passages"):
        inspect_store(empty)
    with pytest.raises(ValueError, match=r"^store: .* returned no candidates"):
        inspect_store(empty, ["Who chairs Tern?"])
    with pytest.raises(ValueError, match=r"^store: expected a vrsd index folder"):
        inspect_store(object())
    with pytest.raises(ValueError, match=r"^k: "):
        inspect_store(demo_store, k=0)
    with pytest.raises(ValueError, match=r"^fetch_k: must be >= k"):
        inspect_store(demo_store, k=5, fetch_k=4)
    with pytest.raises(ValueError, match=r"^sample: "):
        inspect_store(demo_store, sample=0)
    with pytest.raises(ValueError, match=r"^questions: item 1: the query is empty"):
        inspect_store(demo_store, ["Who chairs Tern?", "  "])
    with pytest.raises(TypeError, match="unexpected keyword argument 'top_k'"):
        inspect_store(demo_store, top_k=3)  # type: ignore[call-arg]


def test_a_store_without_vectors_and_no_embedder(demo_store):
    from langchain_community.vectorstores import FAISS

    store = FAISS.from_embeddings(
        [("a passage", [1.0, 0.0]), ("another", [0.0, 1.0])], embedding=None)
    with pytest.raises(ValueError, match=r"^embedder: FAISS keeps no embedding model"):
        inspect_store(store, ["Who chairs Tern?"])


def test_a_store_that_cannot_list_its_passages_needs_questions(embeddings):
    from langchain_core.vectorstores import VectorStore

    model = embeddings

    class Listless(VectorStore):
        embeddings = model

        def add_texts(self, texts, metadatas=None, **kwargs):  # pragma: no cover
            return []

        def similarity_search(self, query, k=4, **kwargs):  # pragma: no cover
            return []

        @classmethod
        def from_texts(cls, texts, embedding, metadatas=None, **kwargs):  # pragma: no cover
            return cls()

    with pytest.raises(ValueError, match=r"^questions: Listless cannot list its passages"):
        inspect_store(Listless())


@pytest.mark.parametrize(("content", "message"), [
    ("Why is Mars red?\n\nWhat is sourdough?\n", r"line 2 is blank"),
    ("   \n", r"no questions in"),
    ('{"question": "Who chairs Tern?"}\nnot json\n', r"line 2: not JSON"),
    ('{"question": "Who chairs Tern?"}\n{"q": "x"}\n', r'line 2: expected an object with a '
                                                       r'"question" field'),
    ('{"question": ""}\n', r"line 1: the query is empty"),
])
def test_bad_questions_files(tmp_path, content, message):
    path = tmp_path / "questions.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^questions: .*{message}"):
        read_questions(path)


def test_questions_files_of_both_kinds(tmp_path):
    lines = tmp_path / "q.txt"
    lines.write_text("Why is Mars red?\n  What is sourdough?  \n\n", encoding="utf-8")
    assert read_questions(lines) == ["Why is Mars red?", "What is sourdough?"]
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text("\n".join(json.dumps({"question": q, "gold": [1]})
                               for q in ("Who chairs Tern?", "What is sourdough?")),
                     encoding="utf-8")
    assert read_questions(jsonl) == ["Who chairs Tern?", "What is sourdough?"]
    (tmp_path / "latin1.txt").write_bytes("Qu'est-ce que le pain?\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"^questions: .* is not UTF-8"):
        read_questions(tmp_path / "latin1.txt")
    with pytest.raises(ValueError, match=r"^questions: cannot read"):
        read_questions(tmp_path / "missing.txt")


# --- the command -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory, demo):
    """The demo's folder as files again, each chunk a paragraph."""
    folder = tmp_path_factory.mktemp("notes")
    files: dict[str, list[str]] = {}
    for source, text in zip(demo.sources, demo.texts, strict=True):
        files.setdefault(source, []).append(text)
    for name, texts in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, demo_folder):
    from vrsd_cli.indexing import index_folder

    where = tmp_path_factory.mktemp("index")
    index_folder(demo_folder, index_dir=where, chunk_size=160, chunk_overlap=0)
    return where


def test_vrsd_inspect_prints_the_table_and_writes_the_report(vrsd, index_dir, tmp_path):
    html = tmp_path / "report.html"
    run = vrsd("inspect", "--index-dir", index_dir, "--sample", "25", "--html", html)
    assert run.code == 0, run.err
    assert f"the index at {index_dir}" in " ".join(run.out.split())
    assert "crowding rate" in run.out and "verdict:" in run.out
    assert "a sample of 25 of the store's passages" in " ".join(run.out.split())
    assert f"wrote report: {html}" in run.err
    page = _Report()
    page.feed(html.read_text(encoding="utf-8"))
    assert page.figures["crowding-rate"] is not None
    # chunks are named by their file and position, not by their content hash
    if "held-back" in page.classes:
        assert ".md #" in " ".join(page.text)


def test_vrsd_inspect_with_a_questions_file(vrsd, index_dir, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "How much sleep do adults need?"}\n'
                         '{"question": "Who chairs Tern?"}\n', encoding="utf-8")
    run = vrsd("inspect", "--index-dir", index_dir, "--questions", questions, "--k", "3",
               "--no-html")
    assert run.code == 0, run.err
    assert "".join(f"2 questions (from {questions})".split()) in "".join(run.out.split())
    assert f"k=3 of fetch_k={DEFAULT_FETCH_K}" in run.out and "wrote report" not in run.err


@pytest.fixture
def empty_index(tmp_path):
    """An index holding no chunk (its chunks removed, as the store can commit it)."""
    import numpy as np

    from vrsd_cli import flat_index
    from vrsd_cli.indexing import index_folder

    where = tmp_path / "empty"
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.md").write_text("One short note.\n", encoding="utf-8")
    index_folder(tmp_path / "one", index_dir=where)
    with flat_index.IndexWriter(where) as store:
        rows = [row for row, *_ in store.records_under(str(tmp_path / "one"))[0]]
        store.commit(store.manifest, rows, [], np.zeros((0, store.manifest["dimension"]), "f4"))
    return where


def test_vrsd_inspect_bad_input_is_one_line_and_exit_2(vrsd, index_dir, empty_index,
                                                      tmp_path):
    blank = tmp_path / "blank.txt"
    blank.write_text("Why is Mars red?\n\nWhat is sourdough?\n", encoding="utf-8")
    malformed = tmp_path / "bad.jsonl"
    malformed.write_text('{"question": "Who chairs Tern?"}\n{"question": \n', encoding="utf-8")
    cases = [
        (["--index-dir", tmp_path / "nowhere"], "--index-dir: no index at"),
        (["--index-dir", empty_index], "--index-dir: the index at"),
        (["--index-dir", index_dir, "--questions", blank], "--questions: "),
        (["--index-dir", index_dir, "--questions", malformed], "--questions: "),
        (["--index-dir", index_dir, "--questions", tmp_path / "missing.txt"],
         "--questions: cannot read"),
        (["--index-dir", index_dir, "--k", "5", "--fetch-k", "4"], "--fetch-k: must be >= k"),
        (["--index-dir", index_dir, "--questions", blank, "--sample", "3"], "--sample: "),
        (["--index-dir", index_dir, "--seed", "-1"], "--seed: "),
    ]
    for args, message in cases:
        run = vrsd("inspect", *args, "--no-html")
        assert run.code == 2, (args, run.err)
        assert run.err.startswith(f"vrsd inspect: error: {message}"), (args, run.err)
        assert run.err.count("\n") == 1 and "Traceback" not in run.err
    run = vrsd("inspect", "--index-dir", empty_index, "--no-html")
    assert "holds no passages" in run.err
    run = vrsd("inspect", "--index-dir", index_dir, "--questions", blank, "--no-html")
    assert "line 2 is blank" in run.err
    run = vrsd("inspect", "--k", "0")
    assert run.code == 2 and "expected a number >= 1" in run.err


def test_vrsd_inspect_without_its_dependencies_names_the_extra(vrsd, monkeypatch, tmp_path):
    import importlib.util

    from vrsd_cli import cli

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else find_spec(name, *a))
    monkeypatch.chdir(tmp_path)
    run = vrsd("inspect")
    assert run.code == 2 and run.err.count("\n") == 1
    assert run.err.startswith("vrsd inspect: error: inspect needs matplotlib (not installed): "
                              "pip install 'vrsd[demo]'")
    assert not list(tmp_path.iterdir())  # nothing was written


def test_vrsd_inspect_no_html_needs_no_plotting_library(vrsd, monkeypatch, index_dir,
                                                         tmp_path):
    """``--no-html`` draws no figure: it runs where matplotlib is not installed (hidden
    from the dependency check and from ``import``)."""
    import importlib.util
    import sys

    from vrsd_cli import cli

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else find_spec(name, *a))
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    monkeypatch.chdir(tmp_path)
    run = vrsd("inspect", "--index-dir", index_dir, "--sample", "10", "--no-html")
    assert run.code == 0, run.err
    assert "crowding rate" in run.out and not list(tmp_path.iterdir())
