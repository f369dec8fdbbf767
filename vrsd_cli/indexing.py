"""``vrsd index`` and ``vrsd search``: a folder of text files in a local Chroma index.

Layout of an index folder (``--index-dir``; default ``$VRSD_INDEX_DIR``, else
``./.vrsd/index``)::

    chroma/             the persistent Chroma store (collection "vrsd", cosine space)
    records.sqlite      LangChain's SQLRecordManager: what was indexed, by content hash
    vrsd_index.json     the embedding model, chunking, and the folders indexed

Indexing goes through LangChain's indexing API (``langchain_core.indexing.index``,
``cleanup="full"``), so re-indexing a folder adds new and changed chunks, leaves
unchanged ones alone and deletes the chunks of edited or removed files: no
duplicates. The record manager's *namespace* is the folder's absolute path, so
the full cleanup is scoped to that folder: indexing folder B into the same
index never deletes folder A's chunks, and ``vrsd search`` searches them all.

Files: every file under the folder, recursively, skipping hidden files and
folders (``.git``, ``.vrsd``, ...) and the index itself; what is read from each
is ``vrsd_cli.reading.read_text`` (plain text whatever its extension, HTML
stripped, PDF with the ``pdf`` extra). A file that is binary, empty or
unreadable is skipped with its reason; an empty folder, or one where nothing is
text, is an error (``ValueError``; the CLI prints it and exits with 2).
"""

from __future__ import annotations

import json
import os
import textwrap
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vrsd_core import DEFAULT_METHOD

from .reading import NotText, read_text

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings

INDEX_ENV = "VRSD_INDEX_DIR"
COLLECTION = "vrsd"
MANIFEST = "vrsd_index.json"
RECORDS = "records.sqlite"


def default_index_dir() -> Path:
    """``$VRSD_INDEX_DIR`` if set, else ``./.vrsd/index``."""
    env = os.environ.get(INDEX_ENV)
    return Path(env) if env else Path(".vrsd") / "index"


def find_files(
    folder: str | os.PathLike[str], exclude: str | os.PathLike[str] | None = None
) -> list[Path]:
    """The files under ``folder`` (recursive, sorted; hidden files and folders skipped,
    and everything under ``exclude``, the index, when it lies inside ``folder``)."""
    root = Path(folder)
    skip = Path(exclude).resolve() if exclude is not None else None
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if skip is not None and path.resolve().is_relative_to(skip):
            continue
        if path.is_file():
            found.append(path)
    return sorted(found)


@dataclass
class IndexReport:
    """What one ``index_folder`` call did."""

    folder: Path
    index_dir: Path
    files: int = 0
    chunks: int = 0
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0

    def summary(self) -> str:
        """One line for the terminal."""
        return (
            f"indexed {self.folder}: {self.files} files, {self.chunks} chunks "
            f"({self.added} added, {self.unchanged} unchanged, {self.deleted} deleted"
            f"{f', {len(self.skipped)} skipped' if self.skipped else ''}) "
            f"into {self.index_dir}"
        )

    def skipped_summary(self) -> str | None:
        """How many files were skipped, by reason (None when none was)."""
        if not self.skipped:
            return None
        reasons = Counter(reason.split(":")[0] for _, reason in self.skipped)
        parts = ", ".join(f"{n} {reason}" for reason, n in reasons.most_common())
        return f"skipped {len(self.skipped)} of {self.files + len(self.skipped)} files ({parts})"


def _read_manifest(index_dir: Path) -> dict[str, Any] | None:
    path = index_dir / MANIFEST
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _open_store(index_dir: Path, embeddings: Embeddings) -> Any:
    from chromadb.config import Settings
    from langchain_chroma import Chroma

    return Chroma(
        collection_name=COLLECTION,
        embedding_function=embeddings,
        persist_directory=str(index_dir / "chroma"),
        collection_metadata={"hnsw:space": "cosine"},
        client_settings=Settings(anonymized_telemetry=False),  # a user's notes phone no one
    )


def _record_manager(index_dir: Path, folder: Path) -> Any:
    from langchain_classic.indexes import SQLRecordManager

    manager = SQLRecordManager(
        f"{COLLECTION}:{folder}", db_url=f"sqlite:///{(index_dir / RECORDS).resolve()}"
    )
    manager.create_schema()
    return manager


def load_chunks(
    folder: Path, files: list[Path], chunk_size: int, chunk_overlap: int
) -> tuple[list[Document], list[tuple[Path, str]]]:
    """Chunks of every readable file (metadata ``source`` = path relative to the folder,
    ``chunk`` = position in the file) and the files skipped, with the reason."""
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=chunk_size, chunk_overlap=chunk_overlap
    )
    chunks: list[Document] = []
    skipped: list[tuple[Path, str]] = []
    for path in files:
        try:
            text = read_text(path)
        except NotText as exc:
            skipped.append((path, exc.reason))
            continue
        source = path.relative_to(folder).as_posix()
        for i, piece in enumerate(splitter.split_text(text)):
            chunks.append(Document(page_content=piece, metadata={"source": source, "chunk": i}))
    return chunks, skipped


def index_folder(
    path: str | os.PathLike[str],
    *,
    index_dir: str | os.PathLike[str] | None = None,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    model: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> IndexReport:
    """Index (or re-index) the text files of ``path`` into ``index_dir`` (``progress``:
    a progress bar on stderr, chunks per second and files done).

    The model is loaded only when a chunk is not in the embedding cache, and a text
    that several chunks share is encoded once (``cached_embeddings(lazy=True)``).

    Raises:
        ValueError: naming the argument: ``path`` missing, not a folder, without
            files or without text; ``chunk_overlap`` out of range;
            ``model`` different from the one the index was built with.
    """
    from langchain_core.indexing import index

    from vrsd_eval.disk_embeddings import cached_embeddings

    folder = Path(path).expanduser().resolve()
    if not folder.exists():
        raise ValueError(f"path: {path} does not exist")
    if not folder.is_dir():
        raise ValueError(f"path: {path} is not a folder")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(
            f"chunk_overlap: expected 0 <= chunk_overlap < chunk_size ({chunk_size}), "
            f"got {chunk_overlap}"
        )
    where = Path(index_dir) if index_dir is not None else default_index_dir()
    files = find_files(folder, exclude=where)
    if not files:
        raise ValueError(f"path: no files under {path}")
    chunks, skipped = load_chunks(folder, files, chunk_size, chunk_overlap)
    if not chunks:
        raise ValueError(f"path: no text in the {len(files)} files under {path}")
    manifest = _read_manifest(where) or {"model": model, "folders": {}}
    if manifest["model"] != model:
        raise ValueError(
            f"model: the index at {where} was built with "
            f"{manifest['model'] or 'the bundled model'}; pass that --model or use another "
            "--index-dir"
        )
    where.mkdir(parents=True, exist_ok=True)
    store = _open_store(where, cached_embeddings(model, cache_dir, lazy=True))
    with _progress_bar(chunks, progress) as fed:
        result = index(
            fed, _record_manager(where, folder), store, batch_size=INDEX_BATCH,
            cleanup="full", source_id_key="source", key_encoder="sha256",
        )
    manifest["folders"][str(folder)] = {
        "chunk_size": chunk_size, "chunk_overlap": chunk_overlap, "chunks": len(chunks),
    }
    (where / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return IndexReport(
        folder=folder, index_dir=where, files=len(files) - len(skipped), chunks=len(chunks),
        skipped=skipped, added=result["num_added"], updated=result["num_updated"],
        unchanged=result["num_skipped"], deleted=result["num_deleted"],
    )


INDEX_BATCH = 256
"""Chunks per batch of the indexing API: one encode call (sorted by length inside it,
so little padding) and one Chroma write each."""


@contextmanager
def _progress_bar(chunks: list[Document], show: bool) -> Iterator[Iterator[Document]]:
    """``chunks`` as the indexing API pulls them, with a tqdm bar when ``show``.

    The API pulls ``INDEX_BATCH`` chunks, encodes and writes them, then pulls the next
    batch: so when a batch's first chunk is pulled, the previous batch is done, and the
    bar counts it then (chunks per second are chunks indexed, not chunks read)."""
    if not show:
        yield iter(chunks)
        return
    from tqdm import tqdm

    files = len({c.metadata["source"] for c in chunks})
    bar = tqdm(total=len(chunks), unit="chunk", desc="indexing", dynamic_ncols=True)
    done_files: set[str] = set()

    def count(upto: int) -> None:
        for chunk in chunks[bar.n:upto]:
            done_files.add(chunk.metadata["source"])
        bar.set_postfix_str(f"{len(done_files)}/{files} files", refresh=False)
        bar.update(upto - bar.n)

    def feed() -> Iterator[Document]:
        for i, chunk in enumerate(chunks):
            if i and i % INDEX_BATCH == 0:
                count(i)
            yield chunk

    try:
        yield feed()
        count(len(chunks))
    finally:
        bar.close()


def open_index(
    index_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Any:
    """The Chroma store of an existing index, with the model it was built with.

    Raises:
        ValueError: naming ``index_dir``, when there is no index there.
    """
    from vrsd_eval.disk_embeddings import cached_embeddings

    where = Path(index_dir) if index_dir is not None else default_index_dir()
    manifest = _read_manifest(where)
    if manifest is None:
        raise ValueError(
            f"index_dir: no index at {where}; build one with 'vrsd index PATH' "
            "(or pass --index-dir)"
        )
    return _open_store(where, cached_embeddings(manifest["model"], cache_dir, lazy=True))


DEFAULT_SEARCH_FETCH_K = 20
"""Candidates ``search_index`` over-fetches when no ``fetch_k`` is given (at least k)."""


def search_index(
    query: str,
    *,
    index_dir: str | os.PathLike[str] | None = None,
    method: str = DEFAULT_METHOD,
    k: int = 4,
    fetch_k: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    lexical: bool = True,
    fill_with_copies: bool = False,
) -> list[Document]:
    """Over-fetch ``fetch_k`` chunks by similarity, select ``k`` with ``method``
    (``lexical``: the default reads the chunks' words too; ``fill_with_copies``: copies of
    kept chunks make up k when nothing else is left; see ``DiverseRetriever``).

    ``fetch_k`` None means ``max(DEFAULT_SEARCH_FETCH_K, k)``; a given ``fetch_k``
    below ``k`` is refused (as ``DiverseRetriever`` refuses it).

    ``method`` is a ``--methods`` token of ``vrsd eval`` (``mmr`` alone means
    MMR at its default lambda). Returned Documents carry ``metadata["vrsd"]``.

    Raises:
        ValueError: naming the argument: no index, an empty index, an unknown
            method or option, an empty query, ``fetch_k`` below ``k``.
    """
    from vrsd_eval.methods import parse_method
    from vrsd_langchain import DiverseRetriever

    if not query.strip():
        raise ValueError("query: empty")
    spec = parse_method(method, expand_mmr=False, name_of_argument="method")[0]
    store = open_index(index_dir, cache_dir)
    if not store.get(limit=1)["ids"]:
        raise ValueError(f"index_dir: the index at {index_dir or default_index_dir()} is empty")
    retriever = DiverseRetriever(
        vectorstore=store, k=k,
        fetch_k=search_fetch_k(k, fetch_k),
        method=spec.method or DEFAULT_METHOD,  # (parse_method always names one)
        method_kwargs=dict(spec.options),
        lexical=lexical,
        fill_with_copies=fill_with_copies,
    )
    return retriever.invoke(query)


def search_fetch_k(k: int, fetch_k: int | None) -> int:
    """The candidates ``search_index`` fetches: ``fetch_k``, else
    ``max(DEFAULT_SEARCH_FETCH_K, k)``."""
    return max(DEFAULT_SEARCH_FETCH_K, k) if fetch_k is None else fetch_k


def format_hits(query: str, docs: list[Document], *, method: str, fetch_k: int,
                width: int = 100, k: int | None = None) -> str:
    """Readable search results with their reasons: the method, each result's relevance
    (and its parts, the cosine and the words' BM25, when the method used both), its
    text, and the candidates plain top-k would have returned that the method held back
    beside the result they are attached to, with the relation when the entry has one;
    when fewer than ``k`` came back because only copies were left, a line says so."""
    infos = [doc.metadata.get("vrsd", {}) for doc in docs]
    if any("lexical" in info for info in infos):
        relevance = ("relevance: the fused score the default ranked by, z(z(cosine) + z(BM25 "
                     "of the words)), each z within the fetched pool (0 its mean, 1 one "
                     "standard deviation above); cosine: the vectors' cosine to the question")
    else:
        relevance = "relevance: cosine to the question"
    held = [entry for info in infos for entry in info.get("held_back", ())]
    lines = [f"{len(docs)} results for {query!r}",
             f"method: {method}: {len(docs)} kept of {fetch_k} fetched by similarity", relevance]
    top = len(docs)
    if any(info.get("stopped") == "restatements" for info in infos):
        asked = f" of the {k} asked" if k is not None else ""
        top = k if k is not None else top
        lines.append(f"{len(docs)} results{asked}: every other candidate repeats one of these "
                     "(--fill-with-copies returns copies too)")
    if held:
        lines.append(f"held back from top-{top}: {_held_back_count(held)}")
    lines.append("")
    for i, (doc, info) in enumerate(zip(docs, infos, strict=True), 1):
        rel = info.get("relevance")
        head = f"{i}. {doc.metadata.get('source', '?')} (chunk {doc.metadata.get('chunk', '?')})"
        if rel is not None:
            head += f"  relevance {rel:.3f}"
        if "lexical" in info:  # the default's parts: the vector's and the words'
            head += f" (cosine {info['cosine']:.3f}, words {info['lexical']:.1f})"
        copy = info.get("copy_of")
        if isinstance(copy, dict):  # a copy that filled a slot (--fill-with-copies)
            verb = "contains" if copy.get("relation") == "contains" else "restates"
            head += f"  [a copy: {verb} #{int(copy.get('rank', 0)) + 1}]"
        lines.append(head)
        body = " ".join(doc.page_content.split())
        lines += textwrap.wrap(body, width=width, initial_indent="   ", subsequent_indent="   ",
                               max_lines=4, placeholder=" ...")
        lines += _held_back_lines(info.get("held_back", ()), width)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


_RELATIONS = {"restates": "restates this", "contains": "contains this",
              "displaced": "made room for this"}


def _held_back_count(held: list[Any]) -> str:
    """How many were held back, by relation when the entries say it."""
    relations = Counter(str(e["relation"]) for e in held if isinstance(e, dict)
                        and e.get("relation"))
    parts = [f"{n} {_RELATIONS.get(r, r).removesuffix(' this')}" for r, n in relations.items()]
    return f"{len(held)}" + (f" ({', '.join(parts)})" if parts else "")


def _held_back_lines(held: Any, width: int) -> list[str]:
    """One line per held-back entry: a dict (source, rank, relation, excerpt), or a bare
    id (held back, no relation given)."""
    ids = [str(entry) for entry in held if not isinstance(entry, dict)]
    lines = [f"   - held back: {', '.join(ids)}"] if ids else []
    for entry in (e for e in held if isinstance(e, dict)):
        where = entry.get("source") or entry.get("id") or "?"
        rank = entry.get("rank")
        line = f"- held back {where}" + (f" (top-k #{rank})" if isinstance(rank, int) else "")
        relation = entry.get("relation")
        if relation:
            line += f": {_RELATIONS.get(relation, relation)}"
        excerpt = " ".join(str(entry.get("excerpt") or "").split())
        if excerpt:
            line += f': "{excerpt}"'
        lines.append("   " + (textwrap.shorten(line, width=width - 3, placeholder=' ..."')
                                if len(line) > width - 3 else line))
    return lines


def hits_json(query: str, docs: list[Document], *, method: str, fetch_k: int) -> str:
    """The search as JSON for scripts: the query, the method, k and fetch_k, and each
    result's text and metadata (``metadata["vrsd"]`` included, JSON-ready)."""
    return json.dumps({
        "query": query, "method": method, "k": len(docs), "fetch_k": fetch_k,
        "results": [{"text": doc.page_content, "metadata": doc.metadata} for doc in docs],
    }, ensure_ascii=False, indent=1)
