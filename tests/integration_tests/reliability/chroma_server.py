"""Run Chroma's own server (``chroma run``) as a child process, on loopback only.

Used by the reliability tests (a session fixture) and by ``benchmarks/load.py``.
The server listens on 127.0.0.1 on a free port with its data in a directory
the caller owns; ``stop()`` terminates it and kills it after a timeout, and the
same object can ``start()`` again on the same port and path (the fault tests
restart the server on the same data). ``freeze()``/``thaw()`` pause and resume
it with SIGSTOP/SIGCONT: a server that accepts connections but never answers.

On Linux the child gets PR_SET_PDEATHSIG, so it dies with the process that
started it even when that process is killed without running its cleanup.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
HEARTBEAT_PATH = "/api/v2/heartbeat"

# chromadb's HttpClient builds its httpx.Client with timeout=None and exposes no
# setting for it, so a frozen server would block a query forever. These bounds
# are applied to the client's session by ``bounded_http_client``.
DEFAULT_CLIENT_TIMEOUT = 5.0
DEFAULT_CONNECT_TIMEOUT = 2.0


def free_port(host: str = HOST) -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def chroma_executable() -> str:
    """The ``chroma`` console script of the running interpreter's environment."""
    beside = Path(sys.executable).with_name("chroma")
    if beside.is_file():
        return str(beside)
    found = shutil.which("chroma")
    if found is None:
        raise FileNotFoundError("the `chroma` command (package chromadb) is not installed")
    return found


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


class ChromaServer:
    """One ``chroma run --host 127.0.0.1 --port P --path DIR`` process.

    Args:
        path: the persistence directory (created if missing).
        port: the port; a free one when None. It stays fixed across restarts.
        startup_timeout: seconds ``start()`` waits for the heartbeat.
    """

    def __init__(self, path: str | os.PathLike[str], port: int | None = None,
                 startup_timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.port = port if port is not None else free_port()
        self.host = HOST
        self.startup_timeout = startup_timeout
        self.log_path = self.path.parent / f"chroma-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def heartbeat(self, timeout: float = 1.0) -> bool:
        """True if the server answers its heartbeat within ``timeout`` seconds."""
        try:
            with urllib.request.urlopen(self.url + HEARTBEAT_PATH, timeout=timeout) as resp:
                return resp.status == 200 and b"heartbeat" in resp.read()
        except (urllib.error.URLError, OSError, TimeoutError):
            return False

    def start(self) -> None:
        """Start the server and wait (bounded) until it answers its heartbeat.

        Raises:
            RuntimeError: with the log's tail, if it exits or stays silent.
        """
        if self.running:
            raise RuntimeError(f"chroma server on port {self.port} is already running")
        self.path.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, ANONYMIZED_TELEMETRY="False", NO_COLOR="1")
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [chroma_executable(), "run", "--host", self.host, "--port", str(self.port),
             "--path", str(self.path)],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(
                    f"chroma server exited with code {self.proc.returncode}:\n{self.log_tail()}"
                )
            if self.heartbeat(timeout=1.0):
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"chroma server gave no heartbeat within {self.startup_timeout} s:\n"
            f"{self.log_tail()}"
        )

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds; always reaps the child."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGCONT)  # a frozen process cannot act on SIGTERM
            except ProcessLookupError:
                pass
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
        if self._log is not None:
            self._log.close()
            self._log = None

    def restart(self) -> None:
        """Stop, then start again on the same port and data directory."""
        self.stop()
        self.start()

    def freeze(self) -> None:
        """SIGSTOP: the port stays open but nothing answers (a hung server)."""
        if not self.running:
            raise RuntimeError("chroma server is not running")
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT after ``freeze()``."""
        if self.proc is not None:
            os.kill(self.proc.pid, signal.SIGCONT)

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> ChromaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def bounded_http_client(server: ChromaServer, timeout: float = DEFAULT_CLIENT_TIMEOUT,
                        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> Any:
    """``chromadb.HttpClient`` for ``server`` whose requests time out.

    chromadb (1.5) creates its httpx session with ``timeout=None`` and has no
    setting for it; ``httpx.Client.timeout`` is settable, so it is set on the
    client's session here (a private attribute of chromadb). Each HttpClient
    has its own session (chromadb gives every HTTP client a new system), so
    every client must be bounded this way.
    """
    import chromadb
    import httpx
    from chromadb.config import Settings

    client = chromadb.HttpClient(
        host=server.host, port=server.port, settings=Settings(anonymized_telemetry=False)
    )
    session = client._server._session  # the FastAPI server API's httpx.Client
    session.timeout = httpx.Timeout(timeout, connect=connect_timeout)
    return client
