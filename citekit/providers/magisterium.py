"""Magisterium AI: OpenAI-style chat completions that answer with citations.

``POST {base}/chat/completions``; citations come as a top-level ``citations`` array (in a
stream, only on the last chunk), related questions as ``related_questions`` when asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..core.names import MAGISTERIUM, ProviderEntry
from ..model import SearchResults
from ..wire.search import Category, search_flow, search_request
from ._chat import ChatClient

__all__ = ["Magisterium"]

_THRESHOLDS = ("BLOCK_ALL", "OFF")


def check_safety_settings(settings: Any) -> dict[str, Any]:
    """``{"CATEGORY_...": {"threshold": "BLOCK_ALL"|"OFF", "response": bool}}`` or ValueError."""
    if not isinstance(settings, Mapping):
        raise ValueError(
            f"safety_settings={settings!r} must be a dict like "
            "{'CATEGORY_NON_CATHOLIC': {'threshold': 'BLOCK_ALL', 'response': True}}"
        )
    out: dict[str, Any] = {}
    for category, rule in settings.items():
        if not isinstance(category, str) or not isinstance(rule, Mapping):
            raise ValueError(f"safety_settings[{category!r}] must be a dict of threshold/response")
        threshold = rule.get("threshold", "BLOCK_ALL")
        if threshold not in _THRESHOLDS:
            raise ValueError(
                f"safety_settings[{category!r}]['threshold']={threshold!r} is not allowed; "
                "use 'BLOCK_ALL' or 'OFF'"
            )
        response = rule.get("response", True)
        if not isinstance(response, bool):
            raise ValueError(
                f"safety_settings[{category!r}]['response']={response!r} must be True or False"
            )
        out[category] = {**dict(rule), "threshold": threshold, "response": response}
    return out


class Magisterium(ChatClient):
    """Client for Magisterium AI (``MAGISTERIUM_API_KEY``).

    ``ask`` and ``chat`` take ``return_related_questions=`` (default True) and
    ``safety_settings=`` besides the usual chat parameters. An answer withheld by the
    content filter has ``finish_reason == "content_filter"``, a note, and a
    ``ContentFilteredWarning``. ``search`` finds documents without an answer.
    """

    entry: ClassVar[ProviderEntry] = MAGISTERIUM

    def _provider_body(self, body: dict[str, Any], options: dict[str, Any]) -> None:
        if "tools" in body or "tool_choice" in body:
            raise ValueError("Magisterium has no tool calling: drop tools= and tool_choice=")
        related = options.pop("return_related_questions", True)
        if not isinstance(related, bool):
            raise ValueError(f"return_related_questions={related!r} must be True or False")
        if related:
            body["return_related_questions"] = True
        settings = options.pop("safety_settings", None)
        if settings is not None:
            body["safety_settings"] = check_safety_settings(settings)
        super()._provider_body(body, options)

    def search(
        self, query: str, *, num_results: int = 10, category: Category | str = "auto"
    ) -> SearchResults:
        """Search Magisterium's documents (``POST /search``): the ``SearchResults``, best first.

        Parameters
        ----------
        query
            What to look for, at most 1024 characters.
        num_results
            How many results, 1 to 100.
        category
            ``"auto"``, ``"magisterial"`` (Church documents) or ``"scholarly"``.

        Notes
        -----
        Searches are retried like any request and are not written to the answer log.

        Examples
        --------
        >>> import citekit as ck
        >>> found = ck.Magisterium().search("subsidiarity", num_results=2, category="magisterial")
        >>> len(found), found[0].rank
        (2, 1)
        """
        spec = search_request(query, num_results=num_results, category=category)
        return self._run(search_flow(self._wire, spec))

    async def asearch(
        self, query: str, *, num_results: int = 10, category: Category | str = "auto"
    ) -> SearchResults:
        """Async twin of ``search``."""
        spec = search_request(query, num_results=num_results, category=category)
        return await self._arun(search_flow(self._wire, spec))
