"""No telemetry and no network attempt in a test run, and none from ``vrsd`` itself.

The session guard (``tests/conftest.py::no_network``) must really catch an attempt,
and every library's telemetry must be off before it is imported.
"""

from __future__ import annotations

import os
import socket

import pytest

from tests.helpers.network import NetworkGuard, is_local
from vrsd_cli.telemetry import NO_TELEMETRY

# TEST-NET-1 (RFC 5737): an address that is never this machine; .invalid never resolves
ELSEWHERE = ("192.0.2.1", 9)
NAME_ELSEWHERE = "telemetry.example.invalid"


def test_a_guard_refuses_and_records_connections_and_lookups_to_other_machines():
    guard = NetworkGuard()
    guard.install()
    try:
        with socket.socket() as sock, pytest.raises(OSError, match="may not use the network"):
            sock.connect(ELSEWHERE)
        with pytest.raises(socket.gaierror, match="may not use the network"):
            socket.getaddrinfo(NAME_ELSEWHERE, 443)
        with pytest.raises(OSError, match="may not use the network"):
            socket.create_connection((NAME_ELSEWHERE, 80), timeout=0.1)
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            assert sock.connect_ex(("2001:db8::1", 443)) != 0
    finally:
        guard.uninstall()
    assert len(guard.attempts) == 4, guard.attempts
    assert guard.attempts[0].startswith("connect 192.0.2.1:9 (in tests/test_no_network.py::")
    assert all(NAME_ELSEWHERE in entry for entry in guard.attempts[1:3])
    assert guard.attempts[3].startswith("connect_ex 2001:db8::1:443")


def test_a_guard_lets_this_machine_through():
    guard = NetworkGuard()
    guard.install()
    try:
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            with socket.create_connection(server.getsockname(), timeout=5):
                pass
        socket.getaddrinfo("localhost", 80)
        left, right = socket.socketpair()  # a Unix socket pair
        left.close()
        right.close()
    finally:
        guard.uninstall()
    assert guard.attempts == []
    assert all(map(is_local, ["127.0.0.1", "::1", "[::1]", "localhost", "0.0.0.0", None,
                              socket.gethostname()]))
    assert not any(map(is_local, ["192.0.2.1", "8.8.8.8", "us.i.posthog.com", "pypi.org"]))


def test_the_session_guard_is_on_and_catches_an_attempt(no_network):
    """The guard every test runs under records this attempt; it is then forgotten, so
    that only this test knows (anything else recorded fails the session)."""
    before = len(no_network.attempts)
    with pytest.raises(OSError, match="tests may not use the network"):
        socket.create_connection(ELSEWHERE, timeout=0.1)
    caught = no_network.attempts[before:]
    del no_network.attempts[before:]
    assert len(caught) == 1 and "192.0.2.1" in caught[0], caught


def test_every_library_telemetry_is_off_in_the_test_run():
    for name, value in NO_TELEMETRY.items():
        assert os.environ[name] == value, name
    from chromadb.config import Settings
    from haystack.telemetry import _telemetry

    assert Settings().anonymized_telemetry is False  # chromadb's posthog
    assert _telemetry.telemetry is None  # haystack's posthog client was never made


def test_the_command_turns_telemetry_off_unless_the_user_chose(monkeypatch):
    from vrsd_cli.cli import main

    for name in NO_TELEMETRY:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DO_NOT_TRACK", "0")  # the user's own choice is kept
    with pytest.raises(SystemExit):
        main(["search", "q", "--k", "0"])  # a usage error, after the settings are made
    assert os.environ["DO_NOT_TRACK"] == "0"
    assert all(os.environ[name] == value for name, value in NO_TELEMETRY.items()
               if name != "DO_NOT_TRACK")


def test_vrsd_index_and_search_stay_on_this_machine(tmp_path, capsys):
    """The index is files in a folder (no server, no client library): indexing and
    searching it under the session's network guard, which fails on any attempt."""
    from vrsd_cli.cli import main

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("A note on kettles.", encoding="utf-8")
    where = ["--index-dir", str(tmp_path / "index")]
    assert main(["index", str(tmp_path / "docs"), *where, "--model", "test:hashing"]) == 0
    assert main(["search", "kettles", *where, "--k", "1"]) == 0
    assert "a.md" in capsys.readouterr().out
