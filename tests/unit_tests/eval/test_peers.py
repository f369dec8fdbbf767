"""The evidence protocol's peers (``vrsd_eval.evidence.peer_rows``): a warning a peer
raises names the peer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from vrsd_eval.evidence import named_warnings


def test_a_peers_warning_names_the_peer_and_its_picks_are_kept():
    def overflowing(q, cands, k):
        np.float32(3e38) * np.ones(1, np.float32) * np.float32(10)  # numpy's own warning
        return [2, 0][:k]

    with pytest.warns(RuntimeWarning, match=r"^pyversity dpp, a peer: overflow encountered"):
        assert named_warnings("pyversity dpp", overflowing)(np.ones(2), np.eye(3, 2), 2) == [2, 0]


def test_a_quiet_peer_raises_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert named_warnings("x", lambda q, c, k: [0])(np.ones(2), np.eye(3, 2), 1) == [0]
