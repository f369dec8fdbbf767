"""The bundled all-MiniLM-L6-v2 run in numpy: its vectors without torch.

``vrsd search`` embeds one question, ``vrsd index`` a folder's chunks. Through
sentence-transformers that means importing torch and transformers and loading the
model, several seconds before the first vector; the encoder itself is six small BERT
layers. ``NumpyEncoder``
runs the same forward pass in numpy on the model's own files: the weights read
from ``model.safetensors`` (``safetensors``), the text tokenized with the
model's ``tokenizer.json`` (``tokenizers``), truncated at the model's
``max_seq_length``, mean-pooled and normalised as its ``modules.json`` says. Its
vectors equal sentence-transformers' to float32 rounding (tested on texts past
the token limit too); nothing is exported or cached.

A question runs alone (no padding) on one BLAS thread: milliseconds. Documents in
bulk run in batches of texts of about the same length, the padding masked out (each
text's vector is the one it gets alone), one batch per thread at once, each on one BLAS
thread: no thread waits on another, as BLAS's own threads do (on a busy machine they
cost more than they gain; ``benchmarks/indexing.py --passages``).
A model folder whose files describe anything else (another architecture,
activation, pooling) is refused with ``UnsupportedModel`` naming what differs.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class UnsupportedModel(ValueError):
    """The model folder is not one ``NumpyEncoder`` runs; the message says why."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"cannot read {path.name}: {exc}") from None


def _expect(what: str, got: object, want: object) -> None:
    if got != want:
        raise UnsupportedModel(f"{what} is {got!r}, the numpy encoder runs {want!r}")


class NumpyEncoder:
    """A sentence-transformers BERT model (mean pooling, normalised), forward in numpy.

    Args:
        path: the model folder (``config.json``, ``model.safetensors``,
            ``tokenizer.json``, ``modules.json``, ``1_Pooling/config.json``, ...).

    Raises:
        UnsupportedModel: a file missing or describing a model this does not run.
        ImportError: ``tokenizers`` or ``safetensors`` missing.
    """

    def __init__(self, path: str | Path) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(path)
        config = _read_json(folder / "config.json")
        _expect("config.json's model_type", config.get("model_type"), "bert")
        _expect("config.json's hidden_act", config.get("hidden_act"), "gelu")
        _expect("config.json's position_embedding_type",
                config.get("position_embedding_type", "absolute"), "absolute")
        modules = [m.get("type", "") for m in _read_json(folder / "modules.json")]
        _expect("modules.json's modules", [m.rsplit(".", 1)[-1] for m in modules],
                ["Transformer", "Pooling", "Normalize"])
        pooling = _read_json(folder / "1_Pooling" / "config.json")
        modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v)
        _expect("the pooling", modes, ["pooling_mode_mean_tokens"])
        limit = _read_json(folder / "sentence_bert_config.json").get("max_seq_length")
        if not isinstance(limit, int) or limit < 1:
            raise UnsupportedModel(f"sentence_bert_config.json's max_seq_length is {limit!r}")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_tokens = min(limit, int(config["max_position_embeddings"]))
        try:
            self.weights = {name.removeprefix("bert."): array.astype(np.float32, copy=False)
                            for name, array in load_file(folder / "model.safetensors").items()}
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # a missing or unreadable file: say which
            raise UnsupportedModel(f"cannot load the model's files: {exc}") from None
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        missing = [n for n in self._names() if n not in self.weights]
        if missing:
            raise UnsupportedModel(f"model.safetensors lacks {missing[0]} "
                                   f"({len(missing)} tensors missing)")
        self.dimension = int(self.weights["embeddings.word_embeddings.weight"].shape[1])

    def _names(self) -> list[str]:
        names = [f"embeddings.{n}" for n in ("word_embeddings.weight",
                 "position_embeddings.weight", "token_type_embeddings.weight",
                 "LayerNorm.weight", "LayerNorm.bias")]
        for i in range(self.layers):
            for part in ("attention.self.query", "attention.self.key",
                         "attention.self.value", "attention.output.dense",
                         "attention.output.LayerNorm", "intermediate.dense",
                         "output.dense", "output.LayerNorm"):
                names += [f"encoder.layer.{i}.{part}.weight", f"encoder.layer.{i}.{part}.bias"]
        return names

    def embed(self, texts: Sequence[str], *, batch_size: int = 1,
              threads: int | None = 1) -> NDArray[np.float32]:
        """One unit vector per text, shape ``(len(texts), dimension)``, float32.

        Args:
            batch_size: texts per forward pass. 1 (a question or a few): each text alone,
                no padding. More (documents in bulk): the texts in order of length, each
                batch padded to its longest, the padding masked out of the attention and
                the mean, so every vector is the one the text gets alone.
            threads: batches computed at once (None: one per CPU core), each on one BLAS
                thread. Threads of Python, not of BLAS: numpy releases the interpreter
                lock in its products and elementwise steps, so the batches run side by
                side and none waits on another.
        """
        import numpy as np
        from threadpoolctl import threadpool_limits

        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size: expected a whole number >= 1, got {batch_size!r}")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                    or threads < 1):
            raise ValueError(f"threads: expected a whole number >= 1 or None, got {threads!r}")
        ids = [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(ids)), key=lambda row: len(ids[row]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)

        def encode(start: int) -> None:
            rows = order[start:start + batch_size]
            longest = max(len(ids[row]) for row in rows)
            batch = np.zeros((len(rows), longest), dtype=np.int64)
            mask = np.zeros((len(rows), longest), dtype=np.float32)
            for i, row in enumerate(rows):
                batch[i, :len(ids[row])] = ids[row]
                mask[i, :len(ids[row])] = 1
            hidden = self._forward(batch, mask)
            pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1)[:, None]
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[rows] = pooled / np.maximum(norms, 1e-12)

        starts = range(0, len(order), batch_size)
        workers = min(len(starts), threads or os.cpu_count() or 1)
        with threadpool_limits(limits=1, user_api="blas"):
            if workers <= 1:
                for start in starts:
                    encode(start)
            else:
                with ThreadPoolExecutor(workers) as pool:
                    list(pool.map(encode, starts))
        return out

    def _forward(self, ids: NDArray[Any], mask: NDArray[np.float32]) -> NDArray[np.float32]:
        """BERT's last hidden states for a batch of sequences ``ids`` (B, n), padded where
        ``mask`` is 0: a padded position is never attended to."""
        import numpy as np

        w = self.weights
        count, n = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        size = x.shape[-1] // self.heads
        scale = np.float32(1 / math.sqrt(size))
        padding = ((mask - 1) * np.float32(1e9))[:, None, None, :]  # (B, 1, 1, n)
        for i in range(self.layers):
            at = f"encoder.layer.{i}."
            q, k, v = (self._linear(x, at + "attention.self." + part)
                       .reshape(count, n, self.heads, size).transpose(0, 2, 1, 3)
                       for part in ("query", "key", "value"))
            scores: NDArray[np.float32] = q @ k.transpose(0, 1, 3, 2)  # softmax in place
            scores *= scale
            scores += padding
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            attended = (scores @ v).transpose(0, 2, 1, 3).reshape(count, n, -1)
            x = self._norm(self._linear(attended, at + "attention.output.dense") + x,
                           at + "attention.output.LayerNorm")
            inner = _gelu(self._linear(x, at + "intermediate.dense"))
            x = self._norm(self._linear(inner, at + "output.dense") + x, at + "output.LayerNorm")
        return x

    def _linear(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        return x @ self.weights[name + ".weight"].T + self.weights[name + ".bias"]

    def _norm(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        import numpy as np

        centred = x - x.mean(axis=-1, keepdims=True)
        scale = np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + self.eps)
        centred /= scale
        centred *= self.weights[name + ".weight"]
        centred += self.weights[name + ".bias"]
        return centred


def _gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """BERT's exact GELU, ``x/2 (1 + erf(x/sqrt 2))``; erf by Abramowitz & Stegun 7.1.26
    (absolute error below 1.5e-7, float32's own rounding), as numpy has no erf. In place
    on two arrays of x's shape (the layer's widest), not one array per step."""
    import numpy as np

    z = np.abs(x)
    z *= np.float32(1 / math.sqrt(2))
    t = z * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)  # Horner's rule in t
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x| / sqrt 2)
    np.subtract(1, poly, out=poly)
    np.copysign(poly, x, out=poly)  # erf(x / sqrt 2)
    poly += 1
    poly *= x
    poly *= np.float32(0.5)
    return poly


@lru_cache(maxsize=1)
def bundled_numpy_encoder() -> NumpyEncoder:
    """``NumpyEncoder`` on the bundled all-MiniLM-L6-v2, loaded once per process.

    Raises:
        ImportError: the bundled model, ``tokenizers``, ``safetensors`` or
            ``threadpoolctl`` missing.
        UnsupportedModel: the bundled files are not what this runs.
    """
    from .bundled_model import bundled_model_path

    return NumpyEncoder(bundled_model_path())
