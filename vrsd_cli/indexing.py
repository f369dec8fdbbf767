"""``vrsd index`` and ``vrsd search``: a folder of text files in a local index, searched
exactly.

The index (``--index-dir``; default ``$VRSD_INDEX_DIR``, else ``./.vrsd/index``) is
``vrsd_cli.flat_index``'s: the chunks' records and unit float32 vectors, one
generation at a time, committed atomically; a search is one matrix product over every
vector, so it returns what an exact search returns after any sequence of added,
changed and deleted files.

Re-indexing a folder compares its chunks (file, position, text digest) with the ones
the index holds for files under that folder: unchanged chunks keep their vectors, a
text the index (or the embedding cache) already has is not encoded again, and the
chunks of edited or removed files are dropped. Chunks are keyed by their file's path,
so several folders share one index, and indexing a folder and then a sub-folder of it
updates the same chunks rather than adding copies. Sources are shown relative to the
deepest folder holding every folder indexed (``projA/README.md``, ``projB/README.md``).

Files: every file under the folder, recursively, skipping hidden files and folders
(``.git``, ``.vrsd``, ...) and the index itself. The folder is the boundary: a link
whose target lies outside it, a link to a folder, a dangling link, a folder that
cannot be listed and anything but a regular file are skipped, each named with its
reason (``follow_symlinks`` reads links, inside the folder or not). What is read from
each file is ``vrsd_cli.reading.read_text``. A file that is binary, empty or
unreadable is skipped with its reason; an empty folder, or one where nothing is
text, is an error (``ValueError``; the CLI prints it and exits with 2).

One writer at a time: ``vrsd index`` holds the index's lock (``filelock``); a second
one is refused at once (``IndexBusy``, naming the first), and ``vrsd search`` reads the
last committed generation meanwhile.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from vrsd_core import DEFAULT_METHOD
from vrsd_kit.settings import DEFAULT_FETCH_K

from . import flat_index as flat
from .reading import NotText, read_text

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from numpy.typing import NDArray

    from vrsd_kit.inspection import Passage, Pool, SourceSpec

INDEX_ENV = "VRSD_INDEX_DIR"
MANIFEST = flat.MANIFEST

HASHING_TEST_MODEL = "test:hashing"
"""``--model test:hashing``: for tests only (``vrsd_cli.hashing_embeddings``): each text's
vector is drawn from a generator seeded by the text's hash, no model is loaded."""

LARGE_FILE_MB = 2.0
"""A file above this many megabytes (10^6 bytes) is announced before the work starts
(``--large-file-mb``)."""
LargeFiles = Literal["index", "skip", "cap"]
LARGE_FILES: tuple[str, ...] = ("index", "skip", "cap")
ESTIMATED_RATE = 9.0
"""Chunks embedded per second for the time a large file is announced with: the bundled
model's rate in ``vrsd index`` on 2 CPU cores (docs/speed.md)."""


def default_index_dir() -> Path:
    """``$VRSD_INDEX_DIR`` if set, else ``./.vrsd/index``."""
    env = os.environ.get(INDEX_ENV)
    return Path(env) if env else Path(".vrsd") / "index"


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def walk_folder(
    folder: str | os.PathLike[str], exclude: str | os.PathLike[str] | None = None, *,
    follow_symlinks: bool = False,
) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(the files to read under ``folder``, sorted; what was left out, with the reason).

    Hidden files and folders, and ``exclude`` (the index) when it lies inside the
    folder, are passed over silently. The folder is the boundary: a link to a file
    outside it (``outside the folder``), a link to a folder (``folder symlink``), a link
    to nothing (``dangling link``), a folder that cannot be listed (``unreadable
    folder``) and a FIFO, socket or device (``not a regular file``) are left out with
    their reason, unless ``follow_symlinks`` (links are then read, a folder linked
    twice once).
    """
    root = Path(folder)
    real_root = os.path.realpath(root)
    skip = os.path.realpath(exclude) if exclude is not None else None
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    seen = {real_root}
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as found:
                entries = sorted(found, key=lambda e: e.name)
        except OSError as exc:
            skipped.append((current, f"unreadable folder: {exc.strerror or exc}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            try:
                if entry.is_symlink():
                    _follow_link(path, real_root, skip, follow_symlinks, seen, stack, files,
                                 skipped)
                elif entry.is_dir(follow_symlinks=False):
                    if skip is None or not _within(os.path.realpath(path), skip):
                        stack.append(path)
                elif entry.is_file(follow_symlinks=False):
                    files.append(path)
                else:
                    skipped.append((path, "not a regular file"))
            except OSError as exc:
                skipped.append((path, f"unreadable: {exc.strerror or exc}"))
    return sorted(files), skipped


def _follow_link(path: Path, real_root: str, skip: str | None, follow: bool, seen: set[str],
                 stack: list[Path], files: list[Path], skipped: list[tuple[Path, str]]
                 ) -> None:
    """One symbolic link met by ``walk_folder``: read, queued, or skipped with why."""
    target = os.path.realpath(path)
    if not os.path.exists(target):
        skipped.append((path, f"dangling link: to {os.readlink(path)}"))
    elif os.path.isdir(target):
        if not follow:
            skipped.append((path, f"folder symlink: to {target}"))
        elif target not in seen and (skip is None or not _within(target, skip)):
            seen.add(target)
            stack.append(path)
    elif not follow and not _within(target, real_root):
        skipped.append((path, f"outside the folder: links to {target}"))
    elif os.path.isfile(target):
        files.append(path)
    else:
        skipped.append((path, "not a regular file"))


def find_files(
    folder: str | os.PathLike[str], exclude: str | os.PathLike[str] | None = None, *,
    follow_symlinks: bool = False,
) -> list[Path]:
    """The files ``walk_folder`` reads under ``folder`` (recursive, sorted)."""
    return walk_folder(folder, exclude, follow_symlinks=follow_symlinks)[0]


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
    follow_symlinks: bool = False

    def summary(self) -> str:
        """One line for the terminal."""
        return (
            f"indexed {self.folder}: {self.files} files, {self.chunks} chunks "
            f"({self.added} added, {self.unchanged} unchanged, {self.deleted} deleted"
            f"{f', {len(self.skipped)} skipped' if self.skipped else ''}) "
            f"into {self.index_dir}"
        )

    def skipped_summary(self) -> str | None:
        """How many files (and links and folders) were skipped, by reason, in one line
        (None when none was)."""
        if not self.skipped:
            return None
        reasons = Counter(reason.split(":")[0] for _, reason in self.skipped)
        parts = ", ".join(f"{n} {reason}" for reason, n in
                          sorted(reasons.items(), key=lambda pair: (-pair[1], pair[0])))
        what = "entries" if reasons.keys() & _NOT_FILES else "files"
        links = reasons.keys() & _LINKS and not self.follow_symlinks
        return (f"skipped {len(self.skipped)} of {self.files + len(self.skipped)} {what} "
                f"({parts}){'; --follow-symlinks reads links' if links else ''}")


_LINKS = {"outside the folder", "folder symlink"}
_NOT_FILES = {"folder symlink", "unreadable folder"}


@dataclass(frozen=True)
class FileChunks:
    """One file's chunks as read for the index."""

    path: Path
    texts: list[str]
    size: int
    capped: bool = False


def read_chunks(
    files: list[Path], chunk_size: int, chunk_overlap: int, *, large_file_mb: float =
    LARGE_FILE_MB, large_files: LargeFiles = "index",
) -> tuple[list[FileChunks], list[tuple[Path, str]]]:
    """Each readable file's chunks (``RecursiveCharacterTextSplitter``) and the files
    skipped with the reason; a file above ``large_file_mb`` is read whole (``index``),
    left out (``skip``), or read up to that size (``cap``)."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=chunk_size, chunk_overlap=chunk_overlap
    )
    limit = int(large_file_mb * 1e6)
    found: list[FileChunks] = []
    skipped: list[tuple[Path, str]] = []
    for path in files:
        try:
            size = path.stat().st_size
        except OSError as exc:
            skipped.append((path, f"unreadable: {exc.strerror or exc}"))
            continue
        large = size > limit
        if large and large_files == "skip":
            skipped.append((path, f"large: {size / 1e6:.1f} MB, above --large-file-mb "
                                  f"{large_file_mb:g}"))
            continue
        try:
            text = read_text(path, limit if large and large_files == "cap" else None)
        except NotText as exc:
            skipped.append((path, exc.reason))
            continue
        found.append(FileChunks(path, splitter.split_text(text), size,
                                capped=large and large_files == "cap"))
    return found, skipped


def load_chunks(
    folder: Path, files: list[Path], chunk_size: int, chunk_overlap: int
) -> tuple[list[Document], list[tuple[Path, str]]]:
    """Chunks of every readable file (metadata ``source`` = path relative to the folder,
    ``chunk`` = position in the file) and the files skipped, with the reason."""
    from langchain_core.documents import Document

    found, skipped = read_chunks(files, chunk_size, chunk_overlap)
    chunks = [Document(page_content=piece, metadata={
        "source": one.path.relative_to(folder).as_posix(), "chunk": i})
        for one in found for i, piece in enumerate(one.texts)]
    return chunks, skipped


def index_embeddings(model: str | None, cache_dir: str | os.PathLike[str] | None = None
                     ) -> Embeddings:
    """The embeddings of an index built with ``model``: the model behind the disk cache,
    loaded only for a text the cache lacks (``HASHING_TEST_MODEL``: the tests' hashing
    embedding, uncached)."""
    if model == HASHING_TEST_MODEL:
        from .hashing_embeddings import HashingEmbeddings

        return HashingEmbeddings()
    from vrsd_eval.disk_embeddings import cached_embeddings

    return cached_embeddings(model, cache_dir, lazy=True)


def index_folder(
    path: str | os.PathLike[str],
    *,
    index_dir: str | os.PathLike[str] | None = None,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    model: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
    follow_symlinks: bool = False,
    rebuild: bool = False,
    large_files: LargeFiles = "index",
    large_file_mb: float = LARGE_FILE_MB,
    notes: Callable[[str], None] | None = None,
) -> IndexReport:
    """Index (or re-index) the text files of ``path`` into ``index_dir``.

    Args:
        progress: a progress bar on stderr (chunks per second, files done).
        follow_symlinks: read links to files outside the folder and links to folders
            (by default the folder is the boundary: ``walk_folder``).
        rebuild: start the index afresh (the fix for a damaged or old index); the other
            folders it held must be indexed again.
        large_files, large_file_mb: a file above ``large_file_mb`` MB is indexed whole
            (``"index"``), left out (``"skip"``) or read up to that size (``"cap"``);
            either way it is announced through ``notes`` before any encoding, with its
            chunks and the estimated time.
        notes: called with each line to show before the work (large files, an
            interrupted run being finished); None: not shown.

    The model is loaded only when a chunk is neither in the index nor in the embedding
    cache, and a text that several chunks share is encoded once.

    Raises:
        ValueError: naming the argument: ``path`` missing, not a folder, without
            files or without text; ``chunk_overlap`` out of range; ``model`` different
            from the one the index was built with; ``index_dir`` damaged (with the fix),
            or being written by another ``vrsd index`` (``IndexBusy``).
    """
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
    if large_files not in LARGE_FILES:
        from vrsd_core._prepare import did_you_mean

        raise ValueError(f"large_files: expected one of {', '.join(LARGE_FILES)}, "
                         f"got {large_files!r}{did_you_mean(large_files, LARGE_FILES)}")
    if not isinstance(large_file_mb, int | float) or not 0 < large_file_mb < float("inf"):
        raise ValueError(f"large_file_mb: expected a size in MB above 0, got {large_file_mb!r}")
    say = notes or (lambda line: None)
    where = Path(index_dir) if index_dir is not None else default_index_dir()
    with ExitStack() as held:
        locked = where.is_dir()  # else taken once there is text to index: no empty index
        left = held.enter_context(flat.writing(where, folder)) if locked else None
        files, walked_out = walk_folder(folder, exclude=where, follow_symlinks=follow_symlinks)
        if not files and not walked_out:
            raise ValueError(f"path: no files under {path}")
        found, unread = read_chunks(files, chunk_size, chunk_overlap,
                                    large_file_mb=large_file_mb, large_files=large_files)
        skipped = walked_out + unread
        if not any(one.texts for one in found):
            raise ValueError(f"path: no text in the {len(files)} files under {path}")
        if not locked:
            left = held.enter_context(flat.writing(where, folder))
        if left is not None:
            say(f"finishing the interrupted 'vrsd index {left.get('folder', '?')}' (started "
                f"{left.get('started', '?')})")
        report = IndexReport(folder=folder, index_dir=where, skipped=skipped,
                             files=len(found), follow_symlinks=follow_symlinks)
        _update(where, folder, found, report, model=model, cache_dir=cache_dir,
                progress=progress, rebuild=rebuild, large_file_mb=large_file_mb, say=say,
                settings={"chunk_size": chunk_size, "chunk_overlap": chunk_overlap,
                          "follow_symlinks": follow_symlinks})
    return report


def _update(where: Path, folder: Path, found: list[FileChunks], report: IndexReport, *,
            model: str | None, cache_dir: str | os.PathLike[str] | None, progress: bool,
            rebuild: bool, large_file_mb: float, say: Callable[[str], None],
            settings: dict[str, Any]) -> None:
    """The diff of ``folder``'s chunks against the index (``rebuild``: against nothing,
    whatever the index holds), the encoding of what is new, and the commit (under the
    lock)."""
    previous = None if rebuild else flat.open_flat(where)
    with ExitStack() as opened:
        if previous is not None:
            opened.callback(previous.close)
        manifest = previous.manifest if previous is not None else {
            "format": flat.FORMAT, "model": model, "dimension": None,
            "generation": flat.last_generation(where), "chunks": 0, "folders": {}}
        if manifest["model"] != model:
            raise ValueError(
                f"model: the index at {where} was built with "
                f"{manifest['model'] or 'the bundled model'}; pass that --model or use "
                "another --index-dir"
            )
        old = previous.records() if previous is not None else []
        old_vectors = previous.vectors if previous is not None else np.zeros((0, 0), "f4")
        scope = str(folder)
        kept = [row for row, rec in enumerate(old) if not _within(rec.file, scope)]
        old_keys = {(rec.file, rec.chunk, rec.digest) for rec in old
                    if _within(rec.file, scope)}
        new = [flat.NewChunk(str(one.path), i, text, flat.digest(text))
               for one in found for i, text in enumerate(one.texts)]
        new_keys = {(c.file, c.chunk, c.digest) for c in new}
        report.chunks = len(new)
        report.unchanged = len(new_keys & old_keys)
        report.added = len(new) - report.unchanged
        report.deleted = len(old_keys - new_keys)
        entry = {**settings, "files": len(found), "chunks": len(new), "indexed": flat.now()}
        manifest = {**manifest, "folders": {**manifest["folders"], scope: entry}}
        if previous is not None and not report.added and not report.deleted:
            flat.write_manifest(where, manifest)  # nothing to encode, nothing to rewrite
            return
        by_digest = {rec.digest: row for row, rec in enumerate(old)}
        missing = list(dict.fromkeys(c.text for c in new if c.digest not in by_digest))
        embeddings = index_embeddings(model, cache_dir)
        _announce_large(found, folder, large_file_mb, embeddings, missing, say)
        encoded = _encode(embeddings, new, missing, progress)
        dimension = manifest["dimension"] or (
            len(next(iter(encoded.values()))) if encoded else old_vectors.shape[1])
        returned = {len(vector) for vector in encoded.values()} - {dimension}
        if returned:
            raise ValueError(f"model: it returned {returned.pop()}-d vectors; the index at "
                             f"{where} holds {dimension}-d ones")
        vectors = np.empty((len(kept) + len(new), dimension), dtype=np.float32)
        if kept:
            vectors[:len(kept)] = old_vectors[kept]
        for i, chunk in enumerate(new, start=len(kept)):
            row = by_digest.get(chunk.digest)
            vectors[i] = old_vectors[row] if row is not None else encoded[chunk.text]
        texts = previous.texts(kept) if previous is not None and kept else []
        others = [flat.NewChunk(old[row].file, old[row].chunk, text, old[row].digest)
                  for row, text in zip(kept, texts, strict=True)]
        flat.commit(where, {**manifest, "dimension": int(dimension)}, others + new, vectors)
        if rebuild:
            flat.remove_old_store(where)


def _announce_large(found: list[FileChunks], folder: Path, large_file_mb: float,
                    embeddings: Embeddings, missing: list[str], say: Callable[[str], None]
                    ) -> None:
    """One line per file above ``large_file_mb`` and one for the whole run: chunks and
    the time to embed the texts not cached yet, before any encoding starts."""
    large = [one for one in found if one.size > large_file_mb * 1e6]
    if not large:
        return
    from vrsd_eval.disk_embeddings import count_uncached

    cached = getattr(embeddings, "document_embedding_store", None) is not None
    todo = count_uncached(embeddings, missing) if cached else len(missing)  # type: ignore[arg-type]
    for one in large:
        how = f"read up to {large_file_mb:g} MB" if one.capped else "read whole"
        say(f"large file {one.path.relative_to(folder).as_posix()}: {one.size / 1e6:.1f} MB, "
            f"{how}: {len(one.texts)} chunks")
    say(f"this run embeds {todo} chunks not cached yet: about {_duration(todo / ESTIMATED_RATE)} "
        f"at {ESTIMATED_RATE:g} chunks/s (Ctrl-C stops it; run it again to go on); "
        f"--large-files skip leaves files above --large-file-mb {large_file_mb:g} out, "
        "--large-files cap reads their first --large-file-mb")


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


INDEX_BATCH = 64
"""Chunks per encode call: the embedding cache stores each batch as it is done, so an
interrupted run's work is not lost, and the progress bar moves with each."""


def _encode(embeddings: Embeddings, new: list[flat.NewChunk], missing: list[str],
            progress: bool) -> dict[str, NDArray[np.float32]]:
    """The unit vectors of ``missing`` (the texts the index lacks, in the folder's
    order), in batches of ``INDEX_BATCH``, with a progress bar over them when
    ``progress``."""
    encoded: dict[str, NDArray[np.float32]] = {}
    with _progress_bar(new, missing, progress) as done:
        for start in range(0, len(missing), INDEX_BATCH):
            batch = missing[start:start + INDEX_BATCH]
            vectors = np.asarray(embeddings.embed_documents(batch), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors /= np.where(norms > 0, norms, 1)
            encoded.update(zip(batch, vectors, strict=True))
            done(start + len(batch))
    return encoded


@contextmanager
def _progress_bar(chunks: list[flat.NewChunk], missing: list[str], show: bool
                  ) -> Iterator[Callable[[int], None]]:
    """``done(n)``: the first ``n`` texts of ``missing`` are embedded (a tqdm bar when
    ``show``). The bar counts only the texts to embed, so its rate is chunks embedded
    per second (chunks the index holds cost nothing and are not counted), and the files
    done of those with a text to embed (a file is done with its last such text)."""
    if not show:
        yield lambda n: None
        return
    from tqdm import tqdm

    position = {text: i for i, text in enumerate(missing)}
    last: dict[str, int] = {}  # file -> the position of its last text to embed
    for chunk in chunks:
        at = position.get(chunk.text)
        if at is not None:
            last[chunk.file] = max(last.get(chunk.file, -1), at)
    ends = sorted(last.values())
    bar = tqdm(total=len(missing), unit="chunk", desc="embedding", dynamic_ncols=True)

    def done(upto: int) -> None:
        files = sum(end < upto for end in ends)
        bar.set_postfix_str(f"{files}/{len(ends)} files", refresh=False)
        bar.update(upto - bar.n)

    try:
        yield done
    finally:
        bar.close()


class IndexUnfinished(UserWarning):
    """The last ``vrsd index`` of the index was interrupted, or is still running: a search
    reads the index as it was before that run started."""


def open_index(index_dir: str | os.PathLike[str] | None = None) -> flat.FlatIndex:
    """The current generation of an existing index (close it when done).

    Raises:
        ValueError: naming ``index_dir``: no index there (an interrupted first run is
            said so, with how to finish it), or a damaged one (the file and the fix).
    """
    where = Path(index_dir) if index_dir is not None else default_index_dir()
    found = flat.open_flat(where)
    status = flat.interruption(where, indexed=found is not None)
    if found is None:
        if status is not None:
            raise ValueError(f"index_dir: no index at {where} yet: {status}")
        raise ValueError(
            f"index_dir: no index at {where}; build one with 'vrsd index PATH' "
            "(or pass --index-dir)"
        )
    if status is not None:
        warnings.warn(status, IndexUnfinished, stacklevel=2)
    return found


def documents(index: flat.FlatIndex, rows: Any) -> list[Document]:
    """The chunks of ``rows`` as LangChain Documents (id, text, ``source`` and ``chunk``)."""
    from langchain_core.documents import Document

    return [Document(id=rec.id, page_content=text,
                     metadata={"source": index.source(rec.file), "chunk": rec.chunk})
            for rec, text in zip(index.records(rows), index.texts(rows), strict=True)]


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
    """The exact top ``fetch_k`` chunks by cosine, then ``k`` of them selected with
    ``method`` by the kit's one rerank body, as ``DiverseRetriever`` selects (``lexical``:
    the default reads the chunks' words too; ``fill_with_copies``: copies of kept chunks
    make up k when nothing else is left).

    ``fetch_k`` None means ``max(DEFAULT_FETCH_K, k)``; a given ``fetch_k``
    below ``k`` is refused (as ``DiverseRetriever`` refuses it).

    ``method`` is a ``--methods`` token of ``vrsd eval`` (``mmr`` alone means
    MMR at its default lambda). Returned Documents carry ``metadata["vrsd"]``.

    Raises:
        ValueError: naming the argument: no index, an empty index, an unknown
            method or option, an empty query, ``fetch_k`` below ``k``.
    """
    from vrsd_eval.methods import parse_method
    from vrsd_kit.rerank import check_query_text, check_query_vector, rerank
    from vrsd_kit.settings import build_settings

    if not query.strip():
        raise ValueError("query: empty")
    spec = parse_method(method, expand_mmr=False, name_of_argument="method")[0]
    settings = build_settings(
        {"k": k, "fetch_k": search_fetch_k(k, fetch_k),
         "method": spec.method or DEFAULT_METHOD,  # (parse_method always names one)
         "options": dict(spec.options), "lexical": lexical,
         "fill_with_copies": fill_with_copies},
        names={"options": "method"})
    index = open_index(index_dir)
    try:
        if not len(index):
            raise ValueError(f"index_dir: the index at {index.where} is empty")
        embeddings = index_embeddings(index.model, cache_dir)
        vector = check_query_vector(embeddings.embed_query(check_query_text(query)))
        rows = index.top(vector, settings.fetch_k or settings.k)
        return rerank(_chunk_view(), documents(index, rows), query=query,
                      query_vector=vector, vectors=np.asarray(index.vectors[rows]),
                      settings=settings)
    finally:
        index.close()


def _chunk_view() -> Any:
    """How the kit's rerank body reads the index's chunks (LangChain Documents): the
    view ``vrsd_langchain``'s ``DocumentView`` is, without importing that package (its
    retrievers and runnables cost seconds at every ``vrsd search``)."""
    from langchain_core.documents import Document

    from vrsd_kit.rerank import ItemView

    class ChunkView(ItemView[Document]):
        def id(self, item: Document) -> Any:
            return item.id

        def text(self, item: Document) -> str:
            return item.page_content

        def metadata(self, item: Document) -> dict[str, Any]:
            return item.metadata

        def annotated(self, item: Document, metadata: dict[str, Any],
                      entry: dict[str, Any]) -> Document:
            return item.model_copy(update={"metadata": metadata})

    return ChunkView()


def search_fetch_k(k: int, fetch_k: int | None) -> int:
    """The candidates ``search_index`` fetches: ``fetch_k``, else
    ``max(DEFAULT_FETCH_K, k)``."""
    return max(DEFAULT_FETCH_K, k) if fetch_k is None else fetch_k


class IndexSource:
    """A ``vrsd index`` folder as ``vrsd inspect`` reads it (``vrsd_kit.inspection``'s
    ``Source``): the exact top ``n`` of each question with their stored vectors."""

    def __init__(self, index_dir: str | os.PathLike[str], k: int | None, fetch_k: int | None,
                 source: SourceSpec, cache_dir: str | os.PathLike[str] | None = None) -> None:
        from vrsd_kit.inspection.run import default_counts

        self.k, self.fetch_k = default_counts(k, fetch_k)
        self.index = open_index(index_dir)
        self.embeddings = index_embeddings(self.index.model, cache_dir)
        self.source = source
        self.name = f"the index at {index_dir}"

    def _passages(self, rows: Any) -> list[Passage]:
        from vrsd_kit.inspection import Passage
        from vrsd_kit.inspection.run import source_label

        return [Passage(doc.id, doc.page_content, source_label(self.source, doc, doc.metadata),
                        f"{doc.metadata['source']} #{doc.metadata['chunk']}")
                for doc in documents(self.index, rows)]

    def prepare(self, questions: list[str]) -> None:
        """The questions embedded ahead, in batches where the model allows."""
        if getattr(self.embeddings, "query_embedding_store", None) is not None:
            from vrsd_langchain.embeddings import warm_query_cache

            warm_query_cache(self.embeddings, questions)  # type: ignore[arg-type]

    def pool(self, question: str, n: int) -> Pool:
        from vrsd_kit.inspection import Pool
        from vrsd_kit.rerank import check_query_vector

        vector = check_query_vector(self.embeddings.embed_query(question))
        rows = self.index.top(vector, n) if len(self.index) else np.zeros(0, dtype=np.int64)
        return Pool(vector, self._passages(rows),
                    np.asarray(self.index.vectors[rows], dtype=np.float64))

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        from vrsd_kit.inspection.run import pick

        return self._passages(pick(range(len(self.index)), count, rng))

