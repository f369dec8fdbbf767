"""A RAG chain in LCEL with diverse retrieval: retriever -> prompt -> chat model.

    python examples/langchain_rag.py ["your question"]

Install (from a checkout; torch first, as the README's Install says):

    pip install -e ".[langchain-embeddings]"

The retriever over-fetches 20 passages of the paraphrase corpus (vrsd_cli/data/demo_corpus.txt) by
similarity and keeps 4 with the recommended default method
(``vrsd_core.DEFAULT_METHOD``: relevance from the passages' vectors and words, then
the most relevant set that spans the most, restatements waiting), so the model
sees complementary passages instead of four paraphrases of one.

The chat model comes from the environment, through LangChain's
``init_chat_model``: set ``VRSD_CHAT_MODEL`` to ``"provider:model"`` (e.g.
``openai:gpt-4o-mini`` with ``OPENAI_API_KEY`` set and ``langchain-openai``
installed, or ``ollama:llama3.2`` with ``langchain-ollama``). Without it the
script prints the grounded prompt the model would receive; no network needed.
"""

from __future__ import annotations

import os

# The bundled model loads from disk: no download, so no progress bars either.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sys

from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from vrsd_cli.demo import load_corpus
from vrsd_langchain import DiverseRetriever, default_embeddings

QUESTION = "Will an afternoon coffee keep me awake at night?"


def format_docs(docs: list[Document]) -> str:
    """The retrieved passages as numbered context lines."""
    return "\n".join(f"[{d.metadata['id']}] {d.page_content}" for d in docs)


def chat_model():
    """The model named by ``VRSD_CHAT_MODEL``, or None."""
    name = os.environ.get("VRSD_CHAT_MODEL")
    if not name:
        return None
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:  # langchain v1 not installed: the same function in langchain-classic
        from langchain_classic.chat_models import init_chat_model
    return init_chat_model(name, temperature=0)


def main() -> None:
    question = sys.argv[1] if len(sys.argv) > 1 else QUESTION
    passages = load_corpus()
    store = InMemoryVectorStore(default_embeddings())
    store.add_texts([p.text for p in passages], metadatas=[{"id": p.id} for p in passages])
    retriever = DiverseRetriever(vectorstore=store, k=4, fetch_k=20)  # the default method
    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer the question using only the context. Cite passage ids in brackets."),
        ("human", "Context:\n{context}\n\nQuestion: {question}"),
    ])
    grounded = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt
    model = chat_model()
    if model is None:
        print("No VRSD_CHAT_MODEL set: the grounded prompt a chat model would receive:\n")
        print(grounded.invoke(question).to_string())
        return
    chain = grounded | model | StrOutputParser()
    print(chain.invoke(question))


if __name__ == "__main__":
    main()
