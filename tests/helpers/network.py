"""A guard that refuses and records every attempt to reach another machine.

While installed, ``socket.socket.connect``/``connect_ex`` to an internet address and
``socket.getaddrinfo`` of a host other than this machine fail as an unreachable
network would (``OSError``, ``ENETUNREACH``, ``socket.gaierror``) and are recorded
with the test that made them (``PYTEST_CURRENT_TEST``). Loopback addresses,
``localhost``, this machine's host name and Unix sockets are allowed: the tests' own
servers (Chroma, Postgres) live there.
``socket.create_connection`` and the HTTP clients go through these two calls. Only
this process is watched: subprocesses (examples, pip) are not.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from typing import Any

_INTERNET = (socket.AF_INET, socket.AF_INET6)


def is_local(host: Any) -> bool:
    """Whether ``host`` (a name or an address, as given to connect or getaddrinfo) is this
    machine without asking any name server."""
    if host is None:  # getaddrinfo(None, port): the local wildcard
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).strip("[]").split("%")[0].lower()
    if name in ("", "localhost", "localhost.localdomain") or name.endswith(".localhost"):
        return True
    if name == socket.gethostname().lower():  # /etc/hosts, no name server
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # a name only a name server can resolve
    return address.is_loopback or address.is_unspecified


class NetworkGuard:
    """Install, run the code under test, uninstall; ``attempts`` lists what was refused.

    Guards nest: ``uninstall`` puts back what ``install`` found (possibly another guard).
    """

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._saved: dict[str, Any] = {}

    def _refuse(self, what: str, target: str) -> str:
        test = os.environ.get("PYTEST_CURRENT_TEST", "outside any test").split(" (")[0]
        entry = f"{what} {target} (in {test})"
        self.attempts.append(entry)
        return f"tests may not use the network: {entry}"

    def install(self) -> None:
        connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
        getaddrinfo = socket.getaddrinfo
        self._saved = {"connect": connect, "connect_ex": connect_ex, "getaddrinfo": getaddrinfo}
        guard = self

        def refused(sock: socket.socket, address: Any, what: str) -> str | None:
            """The refusal's message when ``address`` is another machine's, else None."""
            if sock.family in _INTERNET and isinstance(address, tuple) and address:
                if not is_local(address[0]):
                    return guard._refuse(what, f"{address[0]}:{address[1]}")
            return None

        def guarded_connect(sock: socket.socket, address: Any) -> None:
            message = refused(sock, address, "connect")
            if message:
                raise OSError(errno.ENETUNREACH, message)
            return connect(sock, address)

        def guarded_connect_ex(sock: socket.socket, address: Any) -> int:
            # connect_ex reports failure as an error number, as the real one would
            if refused(sock, address, "connect_ex"):
                return errno.ENETUNREACH
            return connect_ex(sock, address)

        def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not is_local(host):
                raise socket.gaierror(socket.EAI_NONAME,
                                      guard._refuse("getaddrinfo", str(host)))
            return getaddrinfo(host, *args, **kwargs)

        socket.socket.connect = guarded_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = guarded_getaddrinfo

    def uninstall(self) -> None:
        if self._saved:
            socket.socket.connect = self._saved["connect"]  # type: ignore[method-assign]
            socket.socket.connect_ex = self._saved["connect_ex"]  # type: ignore[method-assign]
            socket.getaddrinfo = self._saved["getaddrinfo"]
            self._saved = {}
