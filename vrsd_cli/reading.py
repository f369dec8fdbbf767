"""What ``vrsd index`` reads: the text of a file, whatever its extension.

* HTML (``.html``, ``.htm``, ``.xhtml``): the visible text, markup, scripts and
  styles stripped by Beautiful Soup (``beautifulsoup4``, the ``html`` extra, part of
  ``cli``); its ``<meta charset>`` is honoured.
* PDF (``.pdf``): the pages' text by ``pypdf`` (the ``pdf`` extra, opt-in).
* Every other file is sniffed: text when it has no NUL byte and decodes as UTF-8
  (a BOM is dropped; UTF-16 with a BOM too), else as Windows-1252 or Latin-1 with
  almost no control characters (legacy Western text: decoded, not skipped).
  Anything else is binary.

A file that is not text raises ``NotText`` with the reason (``binary``, ``empty``,
``unreadable: ...``, ``PDF needs pypdf ...``); ``vrsd index`` prints one warning
line per such file and counts them.
"""

from __future__ import annotations

import re
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
PDF_SUFFIX = ".pdf"

# Control characters that no text file holds (tab, newlines, form feed, backspace of
# overstruck man pages and the escape of terminal colours are allowed); 0x80-0x9f are
# the C1 controls Latin-1 decodes stray bytes to.
_CONTROL = re.compile(r"[\x00-\x07\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
_MAX_CONTROL_SHARE = 0.01  # legacy-encoded text: at most 1 character in 100 a control
_SNIFF = 8192  # bytes read first: a binary file is told from them
BLOCK = 1 << 20
"""Bytes read at a time after the first ``_SNIFF``, each block checked for a NUL byte."""
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


class NotText(Exception):
    """A file ``vrsd index`` leaves out; ``reason`` says why, in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_text(path: str | Path, max_bytes: int | None = None, *,
              file: BinaryIO | None = None) -> str:
    """The text of ``path`` (HTML stripped, PDF extracted, other files sniffed);
    ``max_bytes``: a plain file's first ``max_bytes`` bytes only (a character cut in
    two is dropped), the first ``max_bytes`` characters of an HTML or PDF file's text.
    ``file``: ``path`` already opened (binary), read instead of opening ``path`` (which
    then only names it and gives its suffix).

    A plain file is read in blocks of ``BLOCK`` bytes, each checked for a NUL byte, so a
    binary file with a text head is left as soon as its first binary block is read.

    Raises:
        NotText: binary, empty, unreadable, or a PDF without ``pypdf`` installed.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        with ExitStack() as stack:
            source = file if file is not None else stack.enter_context(path.open("rb"))
            if suffix == PDF_SUFFIX:
                text = _pdf_text(source)[:max_bytes]
            elif suffix in HTML_SUFFIXES:
                text = _html_text(source.read())[:max_bytes]
            else:
                data = _read_unless_binary(source, max_bytes)
                text = decode_text(_whole_characters(data) if max_bytes is not None else data)
    except OSError as exc:
        raise NotText(f"unreadable: {exc.strerror or exc}") from None
    if not text.strip():
        raise NotText("empty")
    return text


def _read_unless_binary(file: BinaryIO, max_bytes: int | None = None) -> bytes:
    """The file's bytes (its first ``max_bytes``), read block by block, or
    NotText("binary") at the first block holding a NUL byte, unless the file starts
    with a UTF-16 BOM (a video in the folder is not read whole)."""
    left = max_bytes
    block = file.read(_SNIFF if left is None else min(_SNIFF, left))
    utf16 = block.startswith((b"\xff\xfe", b"\xfe\xff"))
    blocks = []
    while block:
        if b"\x00" in block and not utf16:
            raise NotText("binary")
        blocks.append(block)
        if left is not None:
            left -= len(block)
            if left <= 0:
                break
        block = file.read(BLOCK if left is None else min(BLOCK, left))
    return b"".join(blocks)


def _whole_characters(data: bytes) -> bytes:
    """``data`` cut at a byte limit, without the UTF-8 character the cut split (if the
    rest is UTF-8 at all: other encodings are left to ``decode_text``)."""
    for cut in range(4):
        try:
            (data[:len(data) - cut] if cut else data).decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(data) - 4:
                return data  # not UTF-8 before the cut
            continue
        return data[:len(data) - cut] if cut else data
    return data


def decode_text(data: bytes) -> str:
    """``data`` as text (UTF-8, UTF-16 with a BOM, else Windows-1252/Latin-1 when it
    reads as text), or NotText("binary")."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                break
    if b"\x00" in data:
        raise NotText("binary")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:  # one of the five bytes cp1252 leaves undefined
        text = data.decode("latin-1")
    if len(_CONTROL.findall(text)) > _MAX_CONTROL_SHARE * len(text):
        raise NotText("binary")
    return text


def _html_text(data: bytes) -> str:
    try:
        from bs4 import BeautifulSoup
    except ImportError:
        raise NotText("HTML needs beautifulsoup4: pip install 'vrsd[html]'") from None
    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for hidden in soup(["script", "style", "noscript", "template", "head"]):
        hidden.decompose()
    body = soup.get_text("\n")
    lines = (" ".join(line.split()) for line in body.splitlines())
    text = "\n".join(line for line in lines if line)
    return f"{title}\n\n{text}" if title and not text.startswith(title) else text


def _pdf_text(path: Path | BinaryIO) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        raise NotText("PDF needs pypdf: pip install 'vrsd[pdf]'") from None
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise NotText("encrypted PDF")
        return "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except (PdfReadError, ValueError, KeyError) as exc:  # a damaged file
        raise NotText(f"not a readable PDF: {' '.join(str(exc).split())}") from None
