"""``vrsd index`` reads what it checked (``vrsd_cli.opening.FolderFiles``) and reads it
bounded (``vrsd_cli.reading``): links, folders swapped for links, FIFOs, and binary
files with a text head."""

from __future__ import annotations

import io
import os

import pytest

from vrsd_cli.opening import FolderFiles
from vrsd_cli.reading import BLOCK, NotText, read_text


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("inside a", encoding="utf-8")
    (root / "sub" / "b.txt").write_text("inside b", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside", encoding="utf-8")
    (tmp_path / "outside" / "b.txt").write_text("outside b", encoding="utf-8")
    return root.resolve()


def read(opener: FolderFiles, path) -> str:
    fd, _ = opener.open(path)
    with os.fdopen(fd, "rb") as file:
        return file.read().decode()


def test_files_and_links_inside_are_read(tree):
    (tree / "link.txt").symlink_to(tree / "sub" / "b.txt")
    with FolderFiles(tree) as opener:
        assert read(opener, tree / "a.txt") == "inside a"
        assert read(opener, tree / "sub" / "b.txt") == "inside b"
        assert read(opener, tree / "link.txt") == "inside b"


@pytest.mark.parametrize("swap", ["file", "folder", "link"])
def test_what_now_leads_out_of_the_folder_is_refused(tree, swap):
    outside = tree.parent / "outside"
    if swap == "file":
        path = tree / "a.txt"
        path.unlink()
        path.symlink_to(outside / "secret.txt")
    elif swap == "folder":
        path = tree / "sub" / "b.txt"
        path.unlink()
        (tree / "sub").rmdir()
        (tree / "sub").symlink_to(outside)
    else:  # a link inside the folder, re-pointed outside
        path = tree / "link.txt"
        path.symlink_to(tree / "a.txt")
        path.unlink()
        path.symlink_to(outside / "secret.txt")
    with FolderFiles(tree) as opener, pytest.raises(NotText, match="^outside the folder"):
        opener.open(path)
    with FolderFiles(tree, follow_symlinks=True) as opener:  # asked for: links are read
        assert read(opener, path).startswith("outside")


def test_a_fifo_swapped_in_is_refused_without_blocking(tree):
    path = tree / "a.txt"
    path.unlink()
    os.mkfifo(path)
    for follow in (False, True):
        with FolderFiles(tree, follow_symlinks=follow) as opener, \
                pytest.raises(NotText, match="^not a regular file$"):
            opener.open(path)


def test_a_file_gone_after_the_walk_is_unreadable_not_an_error(tree):
    with FolderFiles(tree) as opener, pytest.raises(NotText, match="^unreadable: "):
        opener.open(tree / "gone.txt")


class Counting(io.BufferedIOBase):
    """A binary file of ``size`` bytes: ``head``, then NUL bytes; counts what is read."""

    def __init__(self, head: bytes, size: int) -> None:
        self.head, self.size, self.position = head, size, 0

    def read(self, n: int | None = -1) -> bytes:
        n = self.size - self.position if n is None or n < 0 else min(n, self.size - self.position)
        start, self.position = self.position, self.position + n
        data = self.head[start:start + n]
        return data + b"\0" * (n - len(data))


def test_a_binary_file_with_a_text_head_is_left_at_its_first_binary_block():
    file = Counting(b"a line of text\n" * 1000, 10**12)  # a terabyte, nearly all NUL
    with pytest.raises(NotText, match="^binary$"):
        read_text("huge.log", file=file)  # type: ignore[arg-type]
    assert file.position <= 8192 + BLOCK


def test_text_is_read_whole_in_blocks_and_capped_where_asked():
    body = "kettle " * (3 * BLOCK // 7)
    file = Counting(body.encode(), len(body))
    assert read_text("notes.txt", file=file) == body  # type: ignore[arg-type]
    capped = Counting(body.encode(), len(body))
    assert read_text("notes.txt", 10_000, file=capped) == body[:10_000]  # type: ignore[arg-type]
    assert capped.position == 10_000
