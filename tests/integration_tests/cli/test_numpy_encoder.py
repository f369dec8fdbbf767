"""``vrsd_kit.numpy_encoder``: the bundled model in numpy gives sentence-transformers'
vectors (``vrsd search``'s new question), refuses a model it does not run, and the
search says so once and falls back to the model when it cannot run."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli_fixtures import write
from vrsd_eval import lazy_embeddings
from vrsd_eval.disk_embeddings import base_embeddings
from vrsd_kit.numpy_encoder import NumpyEncoder, UnsupportedModel, bundled_numpy_encoder

ROOT = Path(__file__).resolve().parents[3]
PROSE = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")

TEXTS = [
    "how fast does a kettle boil?",
    "How fast does a kettle boil",  # case and punctuation
    "kettle",
    "",
    "   \n\t ",
    "a",
    "?!",
    "The quick brown fox jumps over the lazy dog.",
    "naïve café résumé, Straße, Ærø",
    "東京の天気は晴れです。",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "emoji 🙂🚀 and symbols ∑ ≤ ≥ → ©",
    "def f(x):\n    return x ** 2  # square\n",
    "SELECT id, name FROM users WHERE age > 30 ORDER BY name;",
    "https://example.org/path?query=1&b=2#frag",
    "3.14159 2.71828 1e-12 42 0x1F",
    "UPPERCASE TEXT SHOUTING ABOUT DIVERSITY",
    "word " * 300,  # past the 256-token limit
    "antidisestablishmentarianism " * 120,  # many word pieces each, far past the limit
    PROSE[:400],
    PROSE[:3000],  # a real page, past the limit
    PROSE[3000:9000],
    "Diversity-aware reranking picks chunks that answer the question without repeating "
    "each other.",
    "Which chunk restates another? One whose word pairs are 90 % in it.",
    "\u200b zero width space and a\u00a0no-break space",
    "line one\r\nline two\rline three",
    "<html><body><p>markup</p></body></html>",
    "[CLS] [SEP] [PAD] [MASK] [UNK]",  # the tokenizer's special tokens as plain text
    "x" * 2000,  # one long word
]


@pytest.fixture(scope="module")
def encoder() -> NumpyEncoder:
    return bundled_numpy_encoder()


def test_the_vectors_are_sentence_transformers_on_varied_texts(encoder):
    """The same model's vectors: what ``vrsd index`` stored (sentence-transformers
    through ``HuggingFaceEmbeddings``), to float32 rounding, texts past the limit too."""
    ours = encoder.embed(TEXTS)
    theirs = np.asarray(base_embeddings().embed_documents(TEXTS), dtype=np.float64)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    query = np.asarray(base_embeddings().embed_query(TEXTS[0]))
    np.testing.assert_allclose(ours[0], query, atol=1e-5, rtol=0)


def test_a_text_past_the_limit_is_cut_at_the_models_max_seq_length(encoder):
    assert encoder.max_tokens == 256
    long = "word " * 300
    cut, extended = encoder.embed([long, long + "completely different ending here"])
    np.testing.assert_allclose(cut, extended, atol=1e-6)
    short, longer = encoder.embed(["word " * 10, "word " * 10 + "different ending"])
    assert float(short @ longer) < 0.99


def test_blas_threads_are_as_they_were_after_encoding(encoder):
    from threadpoolctl import threadpool_info

    before = [pool["num_threads"] for pool in threadpool_info()]
    encoder.embed(["a question"])
    assert [pool["num_threads"] for pool in threadpool_info()] == before


def _model_copy(tmp_path: Path, model_path: str, **config: object) -> Path:
    """The bundled model's folder, linked file by file, ``config`` changed in config.json."""
    source = Path(model_path)
    copy = tmp_path / "model"
    for path in source.rglob("*"):
        if path.is_file():
            target = copy / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    settings = json.loads((source / "config.json").read_text(encoding="utf-8"))
    (copy / "config.json").unlink()
    (copy / "config.json").write_text(json.dumps({**settings, **config}), encoding="utf-8")
    return copy


def test_an_unchanged_copy_of_the_model_runs(tmp_path, model_path, encoder):
    copy = NumpyEncoder(_model_copy(tmp_path, model_path))
    np.testing.assert_allclose(copy.embed(["kettle"]), encoder.embed(["kettle"]), atol=1e-7)


@pytest.mark.parametrize(("change", "message"), [
    ({"hidden_act": "gelu_new"}, r"config.json's hidden_act is 'gelu_new'"),
    ({"model_type": "roberta"}, r"config.json's model_type is 'roberta'"),
    ({"position_embedding_type": "relative_key"}, r"position_embedding_type is 'relative_key'"),
])
def test_a_model_it_does_not_run_is_refused_naming_why(tmp_path, model_path, change, message):
    with pytest.raises(UnsupportedModel, match=message):
        NumpyEncoder(_model_copy(tmp_path, model_path, **change))


def test_another_pooling_or_a_missing_file_is_refused(tmp_path, model_path):
    copy = _model_copy(tmp_path, model_path)
    pooling = copy / "1_Pooling" / "config.json"
    settings = json.loads(pooling.read_text(encoding="utf-8"))
    pooling.unlink()
    pooling.write_text(json.dumps({**settings, "pooling_mode_mean_tokens": False,
                                   "pooling_mode_cls_token": True}), encoding="utf-8")
    with pytest.raises(UnsupportedModel, match=r"the pooling is \['pooling_mode_cls_token'\]"):
        NumpyEncoder(copy)
    (copy / "modules.json").unlink()
    with pytest.raises(UnsupportedModel, match=r"cannot read modules.json"):
        NumpyEncoder(copy)


@pytest.fixture
def no_numpy_encoder(monkeypatch):
    """The numpy encoder unable to run (as without ``tokenizers``), for this test only."""

    def missing() -> NumpyEncoder:
        raise ImportError("No module named 'tokenizers'")

    lazy_embeddings._numpy_encoder.cache_clear()
    monkeypatch.setattr(lazy_embeddings, "bundled_numpy_encoder", missing)
    yield
    lazy_embeddings._numpy_encoder.cache_clear()


def test_without_the_numpy_encoder_the_search_says_why_once_and_uses_the_model(
        vrsd, tmp_path, no_numpy_encoder):
    docs = write(tmp_path / "docs", {"README": "Kettles boil water.", "notes.md": "# Tea"})
    index = ["--index-dir", tmp_path / "index"]
    indexed = vrsd("index", docs, *index)
    assert indexed.code == 0
    why = ("warning: texts are encoded with torch (slower to start), as the numpy encoder "
           "cannot run: No module named 'tokenizers'\n")
    assert indexed.err == f"vrsd index: {why}"
    lazy_embeddings._numpy_encoder.cache_clear()  # a new process
    first = vrsd("search", "how fast does a kettle boil?", *index, "--json")
    assert first.code == 0, first.err
    assert first.err == f"vrsd search: {why}"
    assert "Kettles boil water." in first.out
    second = vrsd("search", "and how fast does tea brew?", *index)
    assert second.code == 0 and second.err == ""  # once per process


def test_without_the_numpy_encoder_a_query_vector_is_the_models(no_numpy_encoder):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vector = lazy_embeddings.LazyEmbeddings().embed_query("kettle")
    assert [str(w.message).split(":")[0] for w in caught] == [
        "texts are encoded with torch (slower to start), as the numpy encoder cannot run"]
    np.testing.assert_allclose(vector, base_embeddings().embed_query("kettle"), atol=1e-7)


def test_many_questions_at_once_are_encoded_in_batches_without_the_model(
        tmp_path, monkeypatch, encoder):
    """``vrsd inspect`` warms the query cache with many questions: encoded as documents,
    in batches, by the numpy encoder (the model is never loaded); a single question
    after that is read from the cache, and a new one goes to the numpy encoder."""
    from vrsd_cli.indexing import index_embeddings
    from vrsd_langchain.embeddings import warm_query_cache

    def no_model(model=None):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(lazy_embeddings, "base_embeddings", no_model)
    embeddings = index_embeddings(None, tmp_path)
    questions = ["how fast does a kettle boil?", "what is tea?", "why is the sky blue?"]
    assert warm_query_cache(embeddings, questions) == 3
    cached = embeddings.embed_query(questions[1])
    new = embeddings.embed_query("a question not warmed")
    np.testing.assert_allclose(cached, encoder.embed([questions[1]])[0], atol=1e-5)
    np.testing.assert_allclose(new, encoder.embed(["a question not warmed"])[0], atol=1e-7)


@pytest.mark.parametrize("batch_size", [2, 8, 32])
def test_batches_give_each_text_the_vector_it_gets_alone(encoder, batch_size):
    """Padded batches (texts of every length, the longest past the limit): the padding
    is masked out, so a text's vector is the one it gets alone and the model's."""
    alone = encoder.embed(TEXTS)
    batched = encoder.embed(TEXTS, batch_size=batch_size)
    np.testing.assert_allclose(batched, alone, atol=1e-6, rtol=0)
    theirs = np.asarray(base_embeddings().embed_documents(TEXTS), dtype=np.float64)
    np.testing.assert_allclose(batched, theirs, atol=1e-5, rtol=0)
    assert encoder.embed([], batch_size=batch_size).shape == (0, 384)
    with pytest.raises(ValueError, match="^batch_size: expected a whole number >= 1"):
        encoder.embed(TEXTS, batch_size=0)


@pytest.mark.parametrize("threads", [2, 3, None])
def test_batches_on_several_threads_give_the_vectors_of_one(encoder, threads):
    """Batches computed at once, each on one BLAS thread: every vector is the one a single
    thread computes (to float32 rounding), and BLAS's threads are as they were."""
    from threadpoolctl import threadpool_info

    before = [pool["num_threads"] for pool in threadpool_info()]
    one = encoder.embed(TEXTS, batch_size=4)
    several = encoder.embed(TEXTS, batch_size=4, threads=threads)
    np.testing.assert_allclose(several, one, atol=1e-6, rtol=0)
    assert [pool["num_threads"] for pool in threadpool_info()] == before
    for wrong in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="^threads: expected a whole number >= 1 or None"):
            encoder.embed(TEXTS[:2], threads=wrong)


def test_documents_of_the_bundled_model_are_encoded_without_loading_it(monkeypatch):
    """``vrsd index``'s chunks: the numpy encoder's vectors, the model's within 1e-5, and
    torch's model never loaded (a text twice in a call encoded once)."""

    def no_model(model=None):
        raise AssertionError("the model was loaded")

    texts = [*TEXTS[:12], TEXTS[0]]
    theirs = np.asarray(base_embeddings().embed_documents(texts), dtype=np.float64)
    monkeypatch.setattr(lazy_embeddings, "base_embeddings", no_model)
    ours = np.asarray(lazy_embeddings.LazyEmbeddings().embed_documents(texts))
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=0)
    assert lazy_embeddings.LazyEmbeddings().embed_documents([]) == []
