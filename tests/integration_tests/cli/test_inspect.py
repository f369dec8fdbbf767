"""``vrsd inspect`` and ``inspect_store`` on corpora whose answer is known (the demo's
labelled paraphrases; a 20-question slice of HotpotQA, plain, redundant and chunked), through
each framework's store, the HTML report parsed, and bad input: one line, never a
traceback."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser

import numpy as np
import pytest

from tests.helpers.fixtures import li_embed_model_fixture  # noqa: F401  (a fixture)
from vrsd_cli.inspection import inspect_store
from vrsd_cli.inspection.known import agreement, demo_corpus, hotpotqa_corpora
from vrsd_core import DEFAULT_METHOD, pool_units, select
from vrsd_kit.entries import shared_pairs
from vrsd_kit.inspection import (
    CROWDED_RATE,
    format_table,
    read_questions,
    render_html,
    write_html,
)
from vrsd_kit.lexical import pool_relevance

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


def test_demo_crowding_agrees_with_the_paraphrase_labels(demo, demo_found):
    """A fact's paraphrases share a source, so the crowding is the labels' own count;
    what the report says restates is confirmed by the labels."""
    assert len(demo_found.questions) == len(demo.ids) == 67
    agree = agreement(demo_found, demo)
    assert demo_found.crowding_rate == pytest.approx(agree.labelled_rate, abs=1e-9)
    assert agree.precision == 1.0  # paraphrases use other words: nothing said restates


def test_the_demo_verdict_agrees_with_the_demos_facts_and_repeats(demo_store):
    """On the demo's own questions and settings (k=5 of 20), a crowded slot is a top-k
    slot whose fact a higher slot already states: the demo table's count."""
    from vrsd_cli.demo import DEFAULT_QUERY, ORDINARY_QUESTIONS, fact_of

    questions = [DEFAULT_QUERY, *ORDINARY_QUESTIONS]
    found = inspect_store(demo_store, questions, k=5, fetch_k=20)
    repeated = sum(len(q.top_k) - len({fact_of(r.passage.id) for r in q.top_k})
                   for q in found.questions)
    assert found.crowded_slots == repeated
    # the demo's table: top-k returns 99 facts in 125 slots (measured): crowded
    assert found.crowded and found.crowding_rate >= CROWDED_RATE
    assert found.verdict.startswith("top-k is crowded")


def test_hotpotqa_plain_is_clean_and_redundant_and_chunked_are_crowded(hotpot):
    plain_corpus, _, plain = hotpot["plain"]
    redundant_corpus, _, redundant = hotpot["redundant"]
    _, _, chunked = hotpot["chunked"]
    assert redundant.crowded and chunked.crowded and not plain.crowded
    assert min(redundant.crowding_rate, chunked.crowding_rate) >= CROWDED_RATE
    assert plain.crowding_rate < 0.05
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
            share = shared_pairs(gone.passage.text, kept_one.passage.text)
            if h.relation == "restates":
                assert share >= 0.9
            else:
                assert h.relation == "displaced" and kept_one.passage.id not in top
        # a crowded slot repeats a passage above it
        for c in q.crowded_slots:
            this, above = q.repeats(c)
            assert c.by < c.rank
            assert (this.passage.source == above.passage.source
                    or shared_pairs(this.passage.text, above.passage.text) >= 0.9)
        # the question's own passage is never among its candidates
        assert q.own is not None and q.own.id not in top + kept
        assert q.question == q.own.text
    crowded = sum(len(q.crowded_slots) for q in demo_found.questions)
    assert demo_found.crowding_rate == pytest.approx(crowded / (4 * 67))
    assert demo_found.crowded_share == pytest.approx(
        np.mean([q.crowded for q in demo_found.questions]))
    assert sum(demo_found.distribution()) == 67


def test_a_question_of_the_users_is_the_cores_top_k_and_default(demo_store, embeddings):
    question = "How long does caffeine stay in your body?"
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


def test_the_terminal_table(demo_found):
    table = format_table(demo_found, show=3)
    assert "crowding rate" in table and "source concentration" in table
    assert f"verdict: {demo_found.verdict}"[:60] in " ".join(table.split())
    assert table.count(" shares a source with ") + table.count(" restates ") >= 3
    assert all(len(line) <= 100 for line in table.splitlines())


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
    found = inspect_store(demo_store, ["Why is Mars red?"], source=None)
    page = _Report()
    page.feed(render_html(found))
    assert page.figures["source-concentration"] is None  # said n/a, no number
    assert found.source_concentration() is None and found.sources_gained is None
    if not found.crowded:
        assert "question" not in page.classes


# --- the other frameworks' stores ------------------------------------------------------


def _held(found):
    return [[(r.passage.id, h.rank, h.kept, h.relation) for h in q.held_back
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
    assert (found.k, found.fetch_k, len(found.questions)) == (4, 20, 67)
    assert _held(found) == _held(demo_found)
    assert found.crowding_rate == pytest.approx(demo_found.crowding_rate)
    # the pipeline's retriever: its top_k is fetch_k; without embeddings, one clear error
    retriever = InMemoryEmbeddingRetriever(store, top_k=12, return_embedding=True)
    assert inspect_store(retriever, ["Why is Mars red?"], embedder=embeddings.embed_query
                         ).fetch_k == 12
    with pytest.raises(ValueError, match=r"^store: .*without their embeddings"):
        inspect_store(InMemoryEmbeddingRetriever(store), ["Why is Mars red?"],
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
    assert (found.k, found.fetch_k, len(found.questions)) == (4, 20, 67)
    # the same model through another framework: the same held-back passages
    # (floats may differ in the last bits, so allow a near-tie to go the other way)
    same = sum(a == b for a, b in zip(_held(found), _held(demo_found), strict=True))
    assert same >= 64
    assert found.crowding_rate == pytest.approx(demo_found.crowding_rate, abs=0.02)


def test_a_vrsd_retriever_brings_its_k_and_fetch_k(demo_store):
    from vrsd_langchain import DiverseRetriever

    retriever = DiverseRetriever(vectorstore=demo_store, k=3, fetch_k=9)
    found = inspect_store(retriever, ["Why is Mars red?"])
    assert (found.k, found.fetch_k) == (3, 9)
    assert inspect_store(retriever, ["Why is Mars red?"], k=5, fetch_k=15).k == 5
    assert inspect_store(demo_store, ["Why is Mars red?"], k=30).fetch_k == 30


# --- bad input: one clear error naming the argument ------------------------------------


def test_bad_python_input_is_a_value_error_naming_the_argument(demo_store, embeddings):
    from langchain_core.vectorstores import InMemoryVectorStore

    empty = InMemoryVectorStore(embeddings)
    with pytest.raises(ValueError, match=r"^store: InMemoryVectorStore \(LangChain\) holds "
                                         "no passages"):
        inspect_store(empty)
    with pytest.raises(ValueError, match=r"^store: .* returned no candidates"):
        inspect_store(empty, ["Why is Mars red?"])
    with pytest.raises(ValueError, match=r"^store: expected a vrsd index folder"):
        inspect_store(object())
    with pytest.raises(ValueError, match=r"^k: "):
        inspect_store(demo_store, k=0)
    with pytest.raises(ValueError, match=r"^fetch_k: must be >= k"):
        inspect_store(demo_store, k=5, fetch_k=4)
    with pytest.raises(ValueError, match=r"^sample: "):
        inspect_store(demo_store, sample=0)
    with pytest.raises(ValueError, match=r"^questions: item 1: the query is empty"):
        inspect_store(demo_store, ["Why is Mars red?", "  "])
    with pytest.raises(TypeError, match="unexpected keyword argument 'top_k'"):
        inspect_store(demo_store, top_k=3)  # type: ignore[call-arg]


def test_a_store_without_vectors_and_no_embedder(demo_store):
    from langchain_community.vectorstores import FAISS

    store = FAISS.from_embeddings(
        [("a passage", [1.0, 0.0]), ("another", [0.0, 1.0])], embedding=None)
    with pytest.raises(ValueError, match=r"^embedder: FAISS keeps no embedding model"):
        inspect_store(store, ["Why is Mars red?"])


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
    ('{"question": "Why is Mars red?"}\nnot json\n', r"line 2: not JSON"),
    ('{"question": "Why is Mars red?"}\n{"q": "x"}\n', r'line 2: expected an object with a '
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
                               for q in ("Why is Mars red?", "What is sourdough?")),
                     encoding="utf-8")
    assert read_questions(jsonl) == ["Why is Mars red?", "What is sourdough?"]
    (tmp_path / "latin1.txt").write_bytes("Qu'est-ce que le pain?\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"^questions: .* is not UTF-8"):
        read_questions(tmp_path / "latin1.txt")
    with pytest.raises(ValueError, match=r"^questions: cannot read"):
        read_questions(tmp_path / "missing.txt")


# --- the command -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory, demo):
    """The demo corpus as notes, one file per topic, each passage a paragraph."""
    folder = tmp_path_factory.mktemp("notes")
    topics: dict[str, list[str]] = {}
    for source, text in zip(demo.sources, demo.texts, strict=True):
        topics.setdefault(source, []).append(text)
    for topic, texts in topics.items():
        (folder / f"{topic}.md").write_text("\n\n".join(texts) + "\n", encoding="utf-8")
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
                         '{"question": "Why is Mars red?"}\n', encoding="utf-8")
    run = vrsd("inspect", "--index-dir", index_dir, "--questions", questions, "--k", "3",
               "--no-html")
    assert run.code == 0, run.err
    assert "".join(f"2 questions (from {questions})".split()) in "".join(run.out.split())
    assert "k=3 of fetch_k=20" in run.out and "wrote report" not in run.err


@pytest.fixture
def empty_index(tmp_path):
    """An index holding no chunk (a generation of none, as the store can write it)."""
    import numpy as np

    from vrsd_cli import flat_index
    from vrsd_cli.indexing import index_folder

    where = tmp_path / "empty"
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.md").write_text("One short note.\n", encoding="utf-8")
    index_folder(tmp_path / "one", index_dir=where)
    manifest = flat_index.read_manifest(where)
    flat_index.commit(where, manifest, [], np.zeros((0, manifest["dimension"]), "f4"))
    return where


def test_vrsd_inspect_bad_input_is_one_line_and_exit_2(vrsd, index_dir, empty_index,
                                                      tmp_path):
    blank = tmp_path / "blank.txt"
    blank.write_text("Why is Mars red?\n\nWhat is sourdough?\n", encoding="utf-8")
    malformed = tmp_path / "bad.jsonl"
    malformed.write_text('{"question": "Why is Mars red?"}\n{"question": \n', encoding="utf-8")
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
                              "pip install 'vrsd[cli]'")
    assert not list(tmp_path.iterdir())  # nothing was written
