"""What ``vrsd index`` reads: plain text whatever its extension, legacy encodings,
Markdown, reStructuredText, HTML (stripped), PDF; binary files skipped with a warning."""

from __future__ import annotations

import sys

import pytest

from tests.helpers.cli_fixtures import stored, write
from vrsd_cli.reading import NotText, decode_text, read_text

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02"
HTML = b"""<!doctype html><html><head><meta charset="iso-8859-1"><title>Bees</title>
<style>p { color: red }</style><script>var hive = "not text";</script></head>
<body><nav><a href="/">Home</a></nav><h1>Honey bees</h1>
<p>A colony keeps <b>one</b> queen &amp; thousands of workers.</p>
<p>Workers fly up to 6 km from the hive, caf\xe9 or not.</p></body></html>"""


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF showing ``text`` in Helvetica (hand-written objects, exact xref)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


FOLDER = {
    "notes.txt": "Kettles boil water faster at sea level than on a mountain.",
    "README": "This package ships the reference manual and a tutorial.",  # no extension
    "debian/copyright": b"Copyright 2004 Fran\xe7ois M\xfcller <fm@example.org>\n",  # Latin-1
    "legacy.txt": "Caf\u00e9 cr\u00e8me \u2013 a na\u00efve \u201cquote\u201d.".encode("cp1252"),
    "NEWS.rst": "Release 2.0\n===========\n\n* Faster start-up.\n",
    "guide.md": "# Guide\n\nRun the tests before you commit.",
    "site/bees.html": HTML,
    "paper.pdf": tiny_pdf("Photosynthesis turns light into sugar."),
    "photo.png": PNG,
    "noise.bin": bytes(range(1, 256)) * 8,  # no NUL byte: the control characters tell
}


def test_index_reads_what_users_call_text(vrsd, tmp_path):
    docs = write(tmp_path / "docs", FOLDER)
    index_dir = tmp_path / "index"
    run = vrsd("index", docs, "--index-dir", index_dir)
    assert run.code == 0, run.err
    chunks = {source: text for source, _, text in stored(index_dir)}
    assert set(chunks) == set(FOLDER) - {"photo.png", "noise.bin"}
    assert chunks["legacy.txt"] == "Caf\u00e9 cr\u00e8me \u2013 a na\u00efve \u201cquote\u201d."
    assert "Fran\u00e7ois M\u00fcller" in chunks["debian/copyright"]
    assert chunks["paper.pdf"] == "Photosynthesis turns light into sugar."
    bees = chunks["site/bees.html"]
    assert bees.startswith("Bees\n") and "one queen & thousands" in " ".join(bees.split())
    assert "caf\u00e9 or not" in bees  # the page's own charset
    assert "<" not in bees and "hive = " not in bees and "color" not in bees
    warnings = [line for line in run.err.splitlines() if "warning:" in line]
    assert len(warnings) == 2
    assert any(line.endswith("photo.png: binary") for line in warnings)
    assert any(line.endswith("noise.bin: binary") for line in warnings)
    assert f"skipped 2 of {len(FOLDER)} files (2 binary)" in run.err
    assert f"{len(FOLDER) - 2} files" in run.out


def test_an_index_inside_the_folder_is_not_read_as_text(vrsd, tmp_path):
    docs = write(tmp_path / "docs", {"notes.txt": FOLDER["notes.txt"]})
    assert vrsd("index", docs, "--index-dir", docs / "index").code == 0
    again = vrsd("index", docs, "--index-dir", docs / "index")
    assert again.code == 0 and "warning" not in again.err
    assert "1 files, 1 chunks (0 added, 1 unchanged, 0 deleted)" in again.out


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ("na\u00efve \u00e9t\u00e9".encode(), "na\u00efve \u00e9t\u00e9"),
        (b"\xef\xbb\xbfwith a BOM", "with a BOM"),
        ("UTF-16 \u00e9".encode("utf-16"), "UTF-16 \u00e9"),  # NUL bytes, but a BOM
        (b"Stra\xdfe, \x80 5", "Stra\u00dfe, \u20ac 5"),  # cp1252's euro sign
        (b"\x81 Latin-1 where cp1252 has a hole: \xe9" * 20,  # a control every 40 chars
         None),
        (b"a\x00b", None),
    ],
)
def test_decoding_accepts_text_and_refuses_binary(data, text):
    if text is None:
        with pytest.raises(NotText, match="binary"):
            decode_text(data)
    else:
        assert decode_text(data) == text


def test_a_legacy_file_with_a_rare_control_character_is_still_text():
    line = "R\u00e9sum\u00e9 of the meeting, point by point.\n".encode("latin-1")
    assert decode_text(line * 50 + b"\x81").startswith("R\u00e9sum\u00e9")


@pytest.mark.parametrize(("name", "module", "extra"),
                         [("paper.pdf", "pypdf", "pdf"), ("site/bees.html", "bs4", "html")])
def test_a_missing_reader_names_its_extra(tmp_path, monkeypatch, name, module, extra):
    path = write(tmp_path, {name: FOLDER[name]}) / name
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(NotText, match=rf"pip install 'vrsd\[{extra}\]'"):
        read_text(path)


def test_a_damaged_pdf_is_skipped_with_its_reason(tmp_path):
    path = write(tmp_path, {"broken.pdf": b"%PDF-1.4\nnot really a pdf"}) / "broken.pdf"
    with pytest.raises(NotText, match="not a readable PDF"):
        read_text(path)


def test_a_capped_read_drops_the_character_the_cut_split(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("café " * 1000, encoding="utf-8")  # "é" is two bytes
    for limit in (4, 5, 6, 1000, 1001):
        text = read_text(path, max_bytes=limit)
        assert len(text.encode("utf-8")) <= limit and "Ã" not in text and "\ufffd" not in text
        assert ("café " * 1000).startswith(text)
    assert read_text(path, max_bytes=None) == "café " * 1000
