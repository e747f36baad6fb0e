"""Maritaca AI (Sabiá models): OpenAI-style chat completions with the full parameter set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, ClassVar, Literal

from ..core.errors import ConfigurationError, ResponseFormatError
from ..core.fields import parse_created
from ..core.names import MARITACA, ProviderEntry
from ..model import Answer
from ..wire.flow import Flow, RequestSpec, fetch_json
from ..wire.maritaca import FLEX_READ_TIMEOUT, classify
from ..wire.maritaca_batch import BatchRequest, check_size, custom_id
from ..wire.maritaca_responses import RESPONSES_PATH, responses_body, responses_flow
from ..wire.openai_compat import chat_flow
from ..wire.schema import Schema, schema_of
from ._chat import ChatClient, Messages, WireFlow, _messages_for
from .maritaca_batch import BatchJob, start_batch, with_parsed

__all__ = ["BUILT_IN_TOOLS", "Maritaca", "MaritacaModel", "Model", "check_tools_stream"]

#: Maritaca's built-in tools: they run server side, and only in a non-streaming request.
BUILT_IN_TOOLS = ("web_search", "data_ocean", "code_execution")
_SERVICE_TIERS = ("flex", "default", "auto")
API = Literal["chat", "responses"]
_APIS = ("chat", "responses")
_FORMATS = ("text", "json_object", "json_schema")


def _checked_api(api: Any, error: type[Exception] = ValueError) -> API:
    if api not in _APIS:
        raise error(f"api={api!r} is not one of Maritaca's APIs; use 'chat' or 'responses'")
    return api  # type: ignore[no-any-return]


def _checked_format(response_format: Any) -> dict[str, Any]:
    if not isinstance(response_format, Mapping) or response_format.get("type") not in _FORMATS:
        raise ValueError(
            f"response_format={response_format!r} must be like {{'type': 'json_object'}} or "
            "{'type': 'json_schema', 'json_schema': {...}}; schema= builds it from a JSON schema"
        )
    return dict(response_format)


def _structured(flow: Flow[Answer], schema: Schema | None) -> Flow[Answer]:
    """``flow``'s answer with ``parsed`` set from its text (a note saying why when not)."""
    return with_parsed((yield from flow), schema)


def check_tools_stream(body: Mapping[str, Any]) -> None:
    """Refuse a streaming body that turns a built-in tool on, before it is sent.

    Maritaca documents that the built-in tools need ``stream: false`` (a streaming request
    with one is a 400), so the mistake is named here instead of on the wire.
    """
    if not body.get("stream"):
        return
    on = [name for name in BUILT_IN_TOOLS if body.get(name)]
    if on:
        raise ValueError(
            f"Maritaca's built-in tools ({', '.join(on)}) do not stream: "
            "call without stream=True (chat() or ask(), not stream())"
        )


@dataclass(frozen=True, slots=True)
class MaritacaModel:
    """One entry of ``GET /models``: ``context_length`` (tokens, falling back to
    ``top_provider.context_length``) and ``max_completion_tokens`` (from ``top_provider``, the
    most a reply may hold: 32768 in the documentation).

    >>> models = ck.Maritaca().models()
    >>> m = next(m for m in models if m.id == "sabia-4")
    >>> m.owned_by, m.context_length, m.max_completion_tokens
    ('maritacaai', 128000, 32768)
    """

    id: str
    created: datetime | None = None
    owned_by: str | None = None
    context_length: int | None = None
    max_completion_tokens: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


#: The name before 0.2.
Model = MaritacaModel


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def parse_models(data: Any) -> list[MaritacaModel]:
    items = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise ResponseFormatError("maritaca sent a model list without a 'data' array")
    models = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
            continue
        top = item.get("top_provider")
        top = top if isinstance(top, Mapping) else {}
        ctx = _count(item.get("context_length"))
        owner = item.get("owned_by")
        models.append(
            MaritacaModel(
                id=item["id"],
                created=parse_created(item.get("created")),
                owned_by=owner if isinstance(owner, str) else None,
                context_length=ctx if ctx is not None else _count(top.get("context_length")),
                max_completion_tokens=_count(top.get("max_completion_tokens")),
                raw=dict(item),
            )
        )
    return models


class Maritaca(ChatClient):
    """Client for Maritaca AI's Sabiá models (``MARITACA_API_KEY``).

    The default model is ``MARITACA_MODEL`` or ``sabia-4``; ``models()`` lists what the
    server offers.

    Maritaca's built-in tools are keyword switches: ``web_search=True`` (every Sabiá model),
    ``data_ocean=True`` and ``code_execution=True`` (``sabia-4`` and ``sabia-4-thinking``). They
    run on Maritaca's side and only without streaming, so ``stream=True`` with one of them
    raises ``ValueError`` before anything is sent. The links the answer gives become its
    ``citations``, files made by code execution its ``files``, and what the tools did is in
    ``usage.tools``.

    ``service_tier="flex"`` asks for the cheaper tier, whose requests may wait in a queue up to
    5 minutes: unless you set ``timeout=``, such a request gets a read timeout of 330 s, and a
    429 whose body says the flex queue is full raises ``RateLimitError`` saying so.

    ``api="responses"`` (on the constructor, or per call) speaks Maritaca's Responses API
    (``POST /api/v1/responses``, which its docs recommend for new projects) and gives the same
    ``Answer``: a system message is sent as ``instructions``, ``max_tokens`` as
    ``max_output_tokens``, tools in their flat form and the built-in tools as ``tools`` entries;
    a function call's ``ToolCall.id`` is its ``call_id``, ``incomplete_details`` gives
    ``finish_reason="length"``, and a failed response raises ``ProviderError`` with the answer
    in ``.answer``. ``n``, the penalties and ``stream_options`` are Chat Completions' only.

    ``schema=`` asks for structured output (a JSON schema dict, or a pydantic model class), sent
    as ``text.format`` or ``response_format``; ``answer.parsed`` holds the decoded reply (a
    pydantic instance for a model), or None with a note saying why (not JSON, or not valid for
    the schema). A schema over Maritaca's documented limits (unsupported keywords, more than
    100 properties or 5 levels, ...) is a ``ValueError`` before sending. ``response_format=``
    is sent as given.

    Examples
    --------
    >>> mt = ck.Maritaca()
    >>> ans = mt.ask("Pesquise na web: o que mudou no Pix em 2025?", web_search=True)
    >>> [(c.marker, c.document_title) for c in ans.citations][:2]
    [(1, 'Banco Central do Brasil'), (2, 'regulamento do Pix Automático')]
    >>> ans.citations[0].source_url
    'https://www.bcb.gov.br/estabilidadefinanceira/pix'
    >>> chart = mt.ask(
    ...     "Execute código: faça um gráfico de barras da população das regiões do Brasil.",
    ...     code_execution=True,
    ... )
    >>> [(f.name, f.mime_type) for f in chart.files]
    [('populacao_regioes.png', 'image/png'), ('populacao_regioes.csv', 'text/csv')]
    >>> city = mt.ask(
    ...     "Qual é a capital do Brasil?",
    ...     schema={"type": "object", "properties": {"cidade": {"type": "string"}}},
    ...     api="responses",
    ... )
    >>> sorted(city.parsed)
    ['cidade']
    >>> mt.stream("O que mudou no Pix?", web_search=True)
    Traceback (most recent call last):
    ...
    ValueError: Maritaca's built-in tools (web_search) do not stream: call without stream=True ...
    """

    entry: ClassVar[ProviderEntry] = MARITACA

    _classify_error = staticmethod(classify)

    def __init__(self, *, api: API = "chat", **options: Any) -> None:
        self.api: API = _checked_api(api, ConfigurationError)
        super().__init__(**options)

    def _prepare(
        self, messages: Messages, *, stream: bool, params: dict[str, Any]
    ) -> tuple[RequestSpec, str | None]:
        params = dict(params)
        api = _checked_api(params.pop("api", None) or self.api)
        schema, response_format = params.pop("schema", None), params.pop("response_format", None)
        if schema is not None and response_format is not None:
            raise ValueError("pass schema= or response_format=, not both")
        spec, question = super()._prepare(messages, stream=stream, params=params)
        body = dict(spec.json)
        if schema is not None:
            body["response_format"] = schema_of(schema).response_format()
        elif response_format is not None:
            body["response_format"] = _checked_format(response_format)
        if api == "responses":
            spec = replace(spec, path=RESPONSES_PATH, json=responses_body(body))
        else:
            spec = replace(spec, json=body)
        if spec.json.get("service_tier") == "flex" and not self._timeout_given:
            # A flex request may wait in Maritaca's queue up to 5 minutes: the default read
            # timeout (120 s) would give up while it waits. A timeout you set is kept.
            spec = replace(spec, read_timeout=FLEX_READ_TIMEOUT)
        return spec, question

    def _call(
        self,
        messages: Messages,
        *,
        stream: bool,
        cache: bool | None,
        log: bool | None,
        params: Mapping[str, Any],
    ) -> Flow[Answer]:
        params = dict(params)
        schema = params.get("schema")
        if schema is not None:
            params["schema"] = schema = schema_of(schema)  # checked once, before anything is sent
        flow = super()._call(messages, stream=stream, cache=cache, log=log, params=params)
        return _structured(flow, schema)

    def _recalled(
        self,
        messages: Messages,
        cache: bool | None,
        params: Mapping[str, Any],
        deadline: float | None,
    ) -> Answer | None:
        if params.get("schema") is not None:  # its answer is parsed by the flow (_structured)
            return None
        return super()._recalled(messages, cache, params, deadline)

    def _wire_flow(self, spec: RequestSpec) -> WireFlow:
        return responses_flow if spec.path == RESPONSES_PATH else chat_flow

    def _provider_body(self, body: dict[str, Any], options: dict[str, Any]) -> None:
        for name in BUILT_IN_TOOLS:
            if name in options:
                value = options.pop(name)
                if value is not None:
                    body[name] = value
        tier = options.pop("service_tier", None)
        if tier is not None:
            body["service_tier"] = tier
        super()._provider_body(body, options)
        tier = body.get("service_tier")
        if tier is not None and tier not in _SERVICE_TIERS:
            raise ValueError(
                f"service_tier={tier!r} is not allowed; use one of {', '.join(_SERVICE_TIERS)}"
            )
        for name in BUILT_IN_TOOLS:
            value = body.get(name)
            if value is not None and not isinstance(value, bool):
                raise ValueError(f"{name}={value!r} must be True or False")
        check_tools_stream(body)

    def batch(
        self,
        questions: Sequence[str | Messages],
        *,
        system: str | None = None,
        metadata: dict[str, str] | None = None,
        **params: Any,
    ) -> BatchJob:
        """Send ``questions`` (strings, or message lists) through Maritaca's Batch API.

        One input file of chat requests (``custom_id`` ``request-1``, ``request-2``, ...) with
        the chat options given (``model=``, ``temperature=``, ...), uploaded and started at
        once; the ``BatchJob`` returned polls it (``.status()``, ``.wait(progress=True)``),
        cancels it, and gives ``.answers()`` in input order (None where a request failed,
        ``.errors()`` saying why); with ``schema=``, each answer's ``parsed`` as ``ask`` gives
        it. Maritaca runs a batch within 24 h at half the price, up to
        50,000 requests and one model per batch. ``mt.batch_job(job.id)`` finds it again later.

        >>> job = ck.Maritaca().batch(["O Brasil tem vulcão?", "Qual é a capital do Brasil?"])
        >>> [a.batch_id == job.id for a in job.wait(poll=0.5).answers()]
        [True, True]
        """
        if isinstance(questions, str | bytes) or not isinstance(questions, Sequence):
            raise TypeError("batch() takes a list of questions (or of message lists)")
        check_size(len(questions))
        if _checked_api(params.pop("api", None) or "chat") != "chat":
            raise ValueError("Maritaca's Batch API documents Chat Completions only: use api='chat'")
        if params.get("stream"):
            raise ValueError("a batch does not stream")
        params.pop("stream", None)
        schema = params.get("schema")
        if schema is not None:
            params["schema"] = schema = schema_of(schema)  # checked once, before anything is sent
        requests = []
        for index, item in enumerate(questions):
            messages = _messages_for(item, system) if isinstance(item, str) else list(item)
            spec, question = self._prepare(messages, stream=False, params=dict(params))
            body = {k: v for k, v in spec.json.items() if k != "stream"}
            requests.append(BatchRequest(custom_id(index), body, question))
        return start_batch(self, requests, metadata, schema)

    def batch_job(self, batch_id: str, *, schema: Any = None) -> BatchJob:
        """The batch ``batch_id`` (``job.id`` of an earlier ``batch()``, in any session);
        ``schema=`` the one it was sent with, to decode ``answer.parsed`` again."""
        return BatchJob.find(self, batch_id, None if schema is None else schema_of(schema))

    def models(self) -> list[MaritacaModel]:
        """The models this key can use (``GET /models``)."""
        return self._run(fetch_json(self._wire, _MODELS, parse_models))

    async def amodels(self) -> list[MaritacaModel]:
        """Async twin of ``models``."""
        return await self._arun(fetch_json(self._wire, _MODELS, parse_models))


_MODELS = RequestSpec("GET", "/models")
