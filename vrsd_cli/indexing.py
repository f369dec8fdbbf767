"""``vrsd index`` and ``vrsd search``: a folder of text files in a local index, searched
exactly.

The index (``--index-dir``; default ``$VRSD_INDEX_DIR``, else ``./.vrsd/index``) is
``vrsd_cli.flat_index``'s: one SQLite database holding the chunks and their unit float32
vectors, changed per file in one transaction a run; a search is an exact scan of every
vector (``sqlite-vec``), so it returns what an exact search returns after any sequence
of added, changed and deleted files.

Re-indexing a folder reads only the files whose size or modification time changed
since the index read them (or whose settings did), and compares their chunks (file,
position, text digest) with the ones the index holds: unchanged chunks keep their
vectors, a
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
last committed state meanwhile.
"""

from __future__ import annotations

import os
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from vrsd_core import DEFAULT_METHOD
from vrsd_kit.settings import DEFAULT_FETCH_K

from . import flat_index as flat
from .reading import HTML_SUFFIXES, PDF_SUFFIX, NotText, read_text

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from numpy.typing import NDArray

    from vrsd_kit.inspection import Passage, Pool, SourceSpec

INDEX_ENV = "VRSD_INDEX_DIR"
DATABASE = flat.DATABASE

HASHING_TEST_MODEL = "test:hashing"
"""``--model test:hashing``: for tests only (``vrsd_cli.hashing_embeddings``): each text's
vector is drawn from a generator seeded by the text's hash, no model is loaded."""

LARGE_FILE_MB = 2.0
"""A file above this many megabytes (10^6 bytes) is announced before the work starts
(``--large-file-mb``)."""
MAX_FILE_MB = 100.0
"""A file above this many megabytes is left out before any of it is read, unless only its
first ``--large-file-mb`` is read (``--large-files cap``, plain text): ``--max-file-mb``.
The text of a file is held in memory while it is split, so this bounds what one file
can take."""
WHOLE_FILE_SUFFIXES = HTML_SUFFIXES | {PDF_SUFFIX}  # read whole even when capped
LargeFiles = Literal["index", "skip", "cap"]
LARGE_FILES: tuple[str, ...] = ("index", "skip", "cap")
ESTIMATED_RATE = 19.0
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
    LARGE_FILE_MB, large_files: LargeFiles = "index", max_file_mb: float = MAX_FILE_MB,
    folder: Path | None = None, follow_symlinks: bool = False,
) -> tuple[list[FileChunks], list[tuple[Path, str]]]:
    """Each readable file's chunks (``RecursiveCharacterTextSplitter``) and the files
    skipped with the reason; a file above ``large_file_mb`` is read whole (``index``),
    left out (``skip``), or read up to that size (``cap``); a file that would be read
    whole above ``max_file_mb`` is left out before any of it is read.

    Each file is opened by ``opening.FolderFiles`` under ``folder`` (default: the
    files' common folder), and what is read and measured is that descriptor."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from .opening import FolderFiles

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=chunk_size, chunk_overlap=chunk_overlap
    )
    root = folder if folder is not None else Path(os.path.commonpath(files) if files else ".")
    if files and root in files:
        root = root.parent
    found: list[FileChunks] = []
    skipped: list[tuple[Path, str]] = []
    with FolderFiles(root, follow_symlinks=follow_symlinks) as opener:
        for path in files:
            try:
                found.append(_read_file(opener, path, splitter, large_file_mb=large_file_mb,
                                        large_files=large_files, max_file_mb=max_file_mb))
            except NotText as exc:
                skipped.append((path, exc.reason))
    return found, skipped


def _read_file(opener: Any, path: Path, splitter: Any, *, large_file_mb: float,
               large_files: LargeFiles, max_file_mb: float) -> FileChunks:
    """One file's chunks, read from the descriptor ``opener`` gives (NotText: why not)."""
    fd, status = opener.open(path)
    with os.fdopen(fd, "rb") as file:
        size = status.st_size
        large = size > large_file_mb * 1e6
        if large and large_files == "skip":
            raise NotText(f"large: {size / 1e6:.1f} MB, above --large-file-mb "
                          f"{large_file_mb:g}")
        capped = large and large_files == "cap"
        whole = not capped or path.suffix.lower() in WHOLE_FILE_SUFFIXES
        if whole and size > max_file_mb * 1e6:
            raise NotText(f"too large: {size / 1e6:.1f} MB, above --max-file-mb "
                          f"{max_file_mb:g}" + ("" if capped else
                                                " (--large-files cap reads its first "
                                                "--large-file-mb)"))
        try:
            text = read_text(path, int(large_file_mb * 1e6) if capped else None, file=file)
        except MemoryError:
            raise NotText(f"too large to read in the memory left: {size / 1e6:.1f} MB") \
                from None
    return FileChunks(path, splitter.split_text(text), size, capped=capped)


def load_chunks(
    folder: Path, files: list[Path], chunk_size: int, chunk_overlap: int
) -> tuple[list[Document], list[tuple[Path, str]]]:
    """Chunks of every readable file (metadata ``source`` = path relative to the folder,
    ``chunk`` = position in the file) and the files skipped, with the reason."""
    from langchain_core.documents import Document

    found, skipped = read_chunks(files, chunk_size, chunk_overlap, folder=folder)
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
    from vrsd_eval.lazy_embeddings import LazyEmbeddings

    return cached_embeddings(model, cache_dir, embeddings=LazyEmbeddings(model))


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
    max_file_mb: float = MAX_FILE_MB,
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
        max_file_mb: a file that would be read whole above this size is left out, named,
            before any of it is read (``MAX_FILE_MB``).
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
    for name, mb in (("large_file_mb", large_file_mb), ("max_file_mb", max_file_mb)):
        if isinstance(mb, bool) or not isinstance(mb, int | float) or not 0 < mb < float("inf"):
            raise ValueError(f"{name}: expected a size in MB above 0, got {mb!r}")
    say = notes or (lambda line: None)
    where = Path(index_dir) if index_dir is not None else default_index_dir()
    with ExitStack() as held:
        locked = where.is_dir()  # else taken once there is text to index: no empty index
        left = held.enter_context(flat.writing(where, folder)) if locked else None
        files, walked_out = walk_folder(folder, exclude=where, follow_symlinks=follow_symlinks)
        if not files and not walked_out:
            raise ValueError(f"path: no files under {path}")
        settings = {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap,
                    "follow_symlinks": follow_symlinks, "large_files": large_files,
                    "large_file_mb": large_file_mb}
        seen = _signatures(files)
        kept = set() if rebuild or not locked else _unchanged(where, folder, seen, settings)
        to_read = [path for path in files if str(path) not in kept]
        found, unread = read_chunks(to_read, chunk_size, chunk_overlap,
                                    large_file_mb=large_file_mb, large_files=large_files,
                                    max_file_mb=max_file_mb, folder=folder,
                                    follow_symlinks=follow_symlinks) if to_read else ([], [])
        skipped = walked_out + unread
        if not kept and not any(one.texts for one in found):
            raise ValueError(f"path: no text in the {len(files)} files under {path}")
        if not locked:
            left = held.enter_context(flat.writing(where, folder))
        if left is not None:
            say(f"finishing the interrupted 'vrsd index {left.get('folder', '?')}' (started "
                f"{left.get('started', '?')})")
        report = IndexReport(folder=folder, index_dir=where, skipped=skipped,
                             files=len(found) + len(kept), follow_symlinks=follow_symlinks)
        read = flat.FilesRead(str(folder), {str(one.path): seen[str(one.path)]
                                            for one in found
                                            if one.texts and str(one.path) in seen}, kept)
        _update(where, folder, found, read, report, model=model, cache_dir=cache_dir,
                progress=progress, rebuild=rebuild, large_file_mb=large_file_mb, say=say,
                settings=settings)
    return report


_CLOCK_NS = 2_000_000_000
"""A file modified this close to when it was read is read again: a file system's clock
can be this coarse (FAT: 2 s), so a change within it could leave the time unchanged."""


def _signatures(files: list[Path]) -> dict[str, tuple[int, int, int]]:
    """file -> (size, modification time, now; ns), the time taken before the files'."""
    now = time.time_ns()
    found = {}
    for path in files:
        with suppress(OSError):  # (read_chunks says why it cannot read it)
            stat = path.stat()
            found[str(path)] = (stat.st_size, stat.st_mtime_ns, now)
    return found


def _unchanged(where: Path, folder: Path, seen: dict[str, tuple[int, int, int]],
               settings: dict[str, Any]) -> set[str]:
    """The files under ``folder`` the index read with these settings and that have the
    size and modification time they had then (not within ``_CLOCK_NS`` of that read):
    their chunks stay as they are, unread."""
    index = flat.open_flat(where)
    if index is None:
        return set()
    with index:
        entry = index.manifest["folders"].get(str(folder), {})
        if any(entry.get(key) != value for key, value in settings.items()):
            return set()
        return {file for file, (size, mtime_ns, seen_ns) in index.files_read(str(folder)).items()
                if file in seen and seen[file][:2] == (size, mtime_ns)
                and mtime_ns < seen_ns - _CLOCK_NS}


def _update(where: Path, folder: Path, found: list[FileChunks], read: flat.FilesRead,
            report: IndexReport, *,
            model: str | None, cache_dir: str | os.PathLike[str] | None, progress: bool,
            rebuild: bool, large_file_mb: float, say: Callable[[str], None],
            settings: dict[str, Any]) -> None:
    """The diff of ``folder``'s chunks against the index (``rebuild``: against nothing,
    whatever the index holds; the chunks of ``read.kept`` files stay), the encoding of
    what is new, and one commit of what changed (under the lock)."""
    with flat.IndexWriter(where, rebuild=rebuild) as store:
        manifest = store.manifest if store.manifest is not None and not rebuild else {
            "format": flat.FORMAT, "model": model, "dimension": None, "folders": {}}
        if manifest["model"] != model:
            raise ValueError(
                f"model: the index at {where} was built with "
                f"{manifest['model'] or 'the bundled model'}; pass that --model or use "
                "another --index-dir"
            )
        scope = str(folder)
        records, kept = store.records_under(scope, kept=read.kept)
        old = {(file, chunk, text_digest): row for row, file, chunk, text_digest in records}
        new = [flat.NewChunk(str(one.path), i, text, flat.digest(text))
               for one in found for i, text in enumerate(one.texts)]
        new_keys = {(c.file, c.chunk, c.digest) for c in new}
        added = [c for c in new if (c.file, c.chunk, c.digest) not in old]
        removed = [row for key, row in old.items() if key not in new_keys]
        report.chunks = len(new) + kept
        report.unchanged = report.chunks - len(added)
        report.added = len(added)
        report.deleted = len(removed)
        entry = {**settings, "files": report.files, "chunks": report.chunks,
                 "indexed": flat.now()}
        manifest = {**manifest, "folders": {**manifest["folders"], scope: entry}}
        held = store.vectors_for(c.digest for c in added)
        missing = list(dict.fromkeys(c.text for c in added if c.digest not in held))
        encoded: dict[str, NDArray[np.float32]] = {}
        if missing:
            embeddings = index_embeddings(model, cache_dir)
            _announce_large(found, folder, large_file_mb, embeddings, missing, say)
            encoded = _encode(embeddings, added, missing, progress)
        dimension = manifest["dimension"] or (
            len(next(iter(encoded.values()))) if encoded else None)
        returned = {len(vector) for vector in encoded.values()} - {dimension}
        if returned:
            raise ValueError(f"model: it returned {returned.pop()}-d vectors; the index at "
                             f"{where} holds {dimension}-d ones")
        vectors = np.empty((len(added), dimension or 0), dtype=np.float32)
        for i, chunk in enumerate(added):
            vectors[i] = held[chunk.digest] if chunk.digest in held else encoded[chunk.text]
        store.commit({**manifest, "dimension": dimension}, removed, added, vectors, read)
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
    """The last committed state of an existing index (close it when done).

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
    from vrsd_kit.rerank import check_query_text, check_query_vector, reads_words, rerank
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
        chunks = documents(index, rows)
        if reads_words(settings.method, lexical=lexical, relevance=None, query=query):
            settings = replace(settings, background=corpus_background(index, query, rows))
        return rerank(_chunk_view(), chunks, query=query, query_vector=vector,
                      vectors=index.vectors(rows), settings=settings)
    finally:
        index.close()


class WordsUncounted(UserWarning):
    """The index does not count its words yet (it was written before they were counted):
    a search weighs its candidates' words by the candidates alone."""


def corpus_background(index: flat.FlatIndex, query: str, rows: Any) -> Any:
    """The rerank's ``background`` for a pool of the index's chunks (``rows``): what the
    index's other files say is common (``FlatIndex.background``) and what the language
    does (``Background.of_language``); for an index that does not count its words yet,
    the language's alone and a warning naming the fix."""
    from vrsd_kit.lexical import Background

    language = Background.of_language(flat.WORDS_LANGUAGE)
    found = index.background(query, rows)
    if found is not None:
        return (found, language)
    folders = list(index.manifest["folders"]) or ["PATH"]
    warnings.warn(f"the index at {index.where} does not count its words yet (an older vrsd "
                  "wrote it): words common in your files weigh as if rare and may make "
                  f"links; run 'vrsd index {folders[0]}' once to count them",
                  WordsUncounted, stacklevel=3)
    return (language,)


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
        passages = self._passages(rows)
        row_of = {passage.id: int(row) for passage, row in zip(passages, rows, strict=True)}
        return Pool(vector, passages, self.index.vectors(rows).astype(np.float64),
                    lambda query, pool: corpus_background(
                        self.index, query, [row_of[passage.id] for passage in pool]))

    def sample(self, count: int, rng: np.random.Generator) -> list[Passage]:
        from vrsd_kit.inspection.run import pick

        return self._passages(pick(self.index.rows().tolist(), count, rng))

