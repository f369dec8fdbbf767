"""Opening the files ``vrsd index`` found, so that what is read is what was checked.

The walk (``indexing.walk_folder``) checks each entry, but a file can be swapped for a
link, or a folder for a link to another place, between the walk and the read.
``FolderFiles`` therefore opens each file relative to the folder's own descriptor, one
path component at a time, none of them followed if it is a link (``O_NOFOLLOW``), and
checks the opened descriptor (``os.fstat``: a regular file). A path is never looked up
again by name between that check and the read: the read is of the descriptor. With
``follow_symlinks`` links are read wherever they lead, and the descriptor must still be
a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from types import TracebackType

from .reading import NotText

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in does not block the open
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_LINK_ERRORS = {errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", errno.ELOOP)}


class FolderFiles:
    """``open(path) -> (descriptor, its stat)`` for the files under ``root`` (a resolved
    folder); a context manager holding the folder's descriptor."""

    def __init__(self, root: str | os.PathLike[str], *, follow_symlinks: bool = False) -> None:
        self.root = Path(root)
        self.follow_symlinks = follow_symlinks
        self._fd: int | None = None

    def __enter__(self) -> FolderFiles:
        self._fd = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def open(self, path: Path) -> tuple[int, os.stat_result]:
        """A descriptor of ``path`` opened for reading, and its ``fstat`` (close it).

        Raises:
            NotText: ``outside the folder`` (a link now stands where the walk found a
                file or a folder, or it leads out), ``not a regular file``,
                ``unreadable: ...``.
        """
        try:
            fd = self._open_plain(path) if self.follow_symlinks else self._open_inside(path)
        except OSError as exc:
            if exc.errno in _LINK_ERRORS and not self.follow_symlinks:
                raise NotText("outside the folder: a link stands on its path now") from None
            raise NotText(f"unreadable: {exc.strerror or exc}") from None
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            os.close(fd)
            raise NotText("not a regular file")
        return fd, found

    def _open_plain(self, path: Path) -> int:
        return os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)

    def _open_inside(self, path: Path) -> int:
        """``path`` (for a link found inside the folder: its target) opened from the
        folder's descriptor, component by component, following no link."""
        if self._fd is None:
            raise RuntimeError("FolderFiles.open outside its with block")
        target = Path(os.path.realpath(path)) if os.path.islink(path) else path
        try:
            parts = target.relative_to(self.root).parts
        except ValueError:
            raise NotText(f"outside the folder: links to {target}") from None
        if not parts or ".." in parts:
            raise NotText(f"outside the folder: {target}")
        if os.open not in os.supports_dir_fd:  # (Windows) the checked path, opened by name
            return self._open_plain(target)
        fd = self._fd
        try:
            for part in parts[:-1]:
                parent = fd
                fd = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                             dir_fd=parent)
                if parent != self._fd:
                    os.close(parent)
            last = os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC,
                           dir_fd=fd)
        finally:
            if fd != self._fd:
                os.close(fd)
        return last
