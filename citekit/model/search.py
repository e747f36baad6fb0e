"""Search results: the documents a provider's search endpoint found for a query.

Magisterium's ``POST /search`` returns documents without an answer; its response shape is not
documented, so the parser (``citekit.wire.search``) reads it leniently and every value keeps
the JSON it came from in ``raw``. The columns of ``SearchResults.frame()`` use the source
vocabulary of ``citekit.core.columns`` (``document_title``, ``source_url``, ``cited_text``, ...).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, overload

from ..core.columns import source_schema
from ..core.names import MAGISTERIUM
from ..core.years import parse_year

if TYPE_CHECKING:
    import polars as pl

__all__ = ["SEARCH_COLUMNS", "SearchResult", "SearchResults"]

#: The columns of ``SearchResults.frame()``, in order (names from ``citekit.core.columns``).
SEARCH_COLUMNS: Final = (
    "rank",
    "document_title",
    "document_author",
    "document_year",
    "year",
    "source_url",
    "cited_text",
    "score",
)


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One document found: what the provider sent, read leniently; ``raw`` is the item as sent.

    ``rank`` is its one-based place in the provider's list; ``year`` is the year as the
    provider wrote it (``parsed_year`` reads it with the project's one year rule).
    """

    rank: int
    title: str | None = None
    url: str | None = None
    text: str | None = None
    author: str | None = None
    year: str | None = None
    score: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def parsed_year(self) -> int | None:
        """The year ``year`` gives (``citekit.core.years.parse_year``), or None."""
        return parse_year(self.year)

    def row(self) -> dict[str, Any]:
        """The result as a row of ``SearchResults.frame()``."""
        return {
            "rank": self.rank,
            "document_title": self.title,
            "document_author": self.author,
            "document_year": self.year,
            "year": self.parsed_year,
            "source_url": self.url,
            "cited_text": self.text,
            "score": self.score,
        }


@dataclass(frozen=True, slots=True)
class SearchResults:
    """What a search found: ``query``, ``items`` (``SearchResult``, best first) and ``raw``
    (the response body as sent). Iterable, sized and indexable; shows itself as a linked list in
    a notebook.

    >>> import citekit as ck
    >>> results = ck.Magisterium().search("dignity of work", num_results=3)
    >>> len(results), results[0].rank
    (3, 1)
    >>> results.frame().columns[:3]
    ['rank', 'document_title', 'document_author']
    """

    query: str
    items: tuple[SearchResult, ...] = ()
    raw: Any = field(default=None, repr=False, compare=False)
    provider: str = MAGISTERIUM.name

    def __iter__(self) -> Iterator[SearchResult]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> SearchResult: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[SearchResult, ...]: ...
    def __getitem__(self, index: int | slice) -> SearchResult | tuple[SearchResult, ...]:
        return self.items[index]

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def sample_label(self) -> str | None:
        """The ``citekit_sample`` label of a recorded-format sample, else None."""
        if isinstance(self.raw, Mapping):
            label = self.raw.get("citekit_sample")
            if isinstance(label, str) and label:
                return label
        return None

    def frame(self) -> pl.DataFrame:
        """One row per result, typed by a named schema even when there are none (polars)."""
        import polars as pl

        return pl.DataFrame(
            [item.row() for item in self.items], schema=source_schema(SEARCH_COLUMNS), orient="row"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from ..render.bundle import search_bundle

        return search_bundle(self, include=include, exclude=exclude)

    def __str__(self) -> str:
        from ..render.search import search_text

        return search_text(self)
