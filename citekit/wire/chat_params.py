"""Chat-completions request bodies, checked before anything is sent.

Every parameter is checked against its documented range (Maritaca's reference: both penalties
-2..2, n >= 1, stop a list of strings, stream_options only with stream, tool_choice "none" |
"auto" | "required" | a named function); a wrong value raises ``ValueError`` naming the
parameter, the value and what is allowed. temperature and top_p have no documented range
(Maritaca gives only defaults, 0.7 and 0.95): citekit holds them to OpenAI's, temperature 0..2
and top_p (0, 1], and its messages say the bound is citekit's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["CHAT_PARAMETERS", "build_chat_body", "check_messages", "last_user_message"]

ROLES = ("system", "user", "assistant", "tool")
TOOL_CHOICES = ("none", "auto", "required")
# name -> (low, high, low_inclusive) for float parameters, documented ranges.
_FLOAT_RANGES: dict[str, tuple[float, float, bool]] = {
    "temperature": (0.0, 2.0, True),
    "top_p": (0.0, 1.0, False),
    "frequency_penalty": (-2.0, 2.0, True),
    "presence_penalty": (-2.0, 2.0, True),
}


#: Bounds citekit sets itself: the providers document none for these.
_OWN_BOUNDS = frozenset({"temperature", "top_p"})


def _check_float(name: str, value: Any) -> float:
    low, high, low_inclusive = _FLOAT_RANGES[name]
    shown = f"{'[' if low_inclusive else '('}{low:g}, {high:g}]"
    if name in _OWN_BOUNDS:
        shown += " (citekit's bound, as OpenAI's API has it: the provider documents no range)"
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValueError(f"{name}={value!r} is not a number; allowed range {shown}")
    if value > high or value < low or (value == low and not low_inclusive):
        raise ValueError(f"{name}={value!r} is out of range; allowed range {shown}")
    return float(value)


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}={value!r} must be a whole number >= {minimum}")
    if value < minimum:
        raise ValueError(f"{name}={value!r} is out of range; it must be >= {minimum}")
    return value


def check_messages(messages: Any) -> list[dict[str, Any]]:
    """A list of ``{"role", "content"}`` dicts with known roles, or a ``ValueError``."""
    if isinstance(messages, str) or not isinstance(messages, Sequence) or not messages:
        raise ValueError(
            "messages must be a non-empty list of {'role': ..., 'content': ...} dicts; "
            "to send one question use ask(question)"
        )
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"messages[{i}]={message!r} must be a dict with role and content")
        role = message.get("role")
        if role not in ROLES:
            raise ValueError(
                f"messages[{i}]['role']={role!r} is not allowed; use one of {', '.join(ROLES)}"
            )
        content = message.get("content")
        tool_calls = message.get("tool_calls")
        if content is None and not (role == "assistant" and tool_calls):
            raise ValueError(f"messages[{i}] ({role}) has no 'content'")
        if content is not None and not isinstance(content, str | list):
            raise ValueError(
                f"messages[{i}]['content'] must be a string or a list of content parts, "
                f"not {type(content).__name__}"
            )
        if role == "tool" and not message.get("tool_call_id"):
            raise ValueError(f"messages[{i}] (tool) needs the 'tool_call_id' it answers")
        out.append(dict(message))
    return out


def _check_tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, Sequence) or isinstance(tools, str):
        raise ValueError("tools must be a list of {'type': 'function', 'function': {...}} specs")
    out = []
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if (
            not isinstance(tool, Mapping)
            or tool.get("type", "function") != "function"
            or not isinstance(fn, Mapping)
            or not isinstance(fn.get("name"), str)
            or not fn["name"]
        ):
            raise ValueError(
                f"tools[{i}]={tool!r} must look like "
                "{'type': 'function', 'function': {'name': ..., 'parameters': {...}}}"
            )
        out.append({"type": "function", **dict(tool)})
    return out


def _check_tool_choice(tool_choice: Any, tools: list[dict[str, Any]] | None) -> Any:
    if isinstance(tool_choice, str):
        if tool_choice not in TOOL_CHOICES:
            raise ValueError(
                f"tool_choice={tool_choice!r} is not allowed; use 'none', 'auto', 'required' "
                "or {'type': 'function', 'function': {'name': ...}}"
            )
        if tool_choice == "required" and not tools:
            raise ValueError("tool_choice='required' needs tools=")
        return tool_choice
    fn = tool_choice.get("function") if isinstance(tool_choice, Mapping) else None
    if (
        not isinstance(tool_choice, Mapping)
        or tool_choice.get("type") != "function"
        or not isinstance(fn, Mapping)
        or not isinstance(fn.get("name"), str)
    ):
        raise ValueError(
            f"tool_choice={tool_choice!r} is not allowed; use 'none', 'auto', 'required' "
            "or {'type': 'function', 'function': {'name': ...}}"
        )
    names = [t["function"]["name"] for t in tools or []]
    if fn["name"] not in names:
        raise ValueError(
            f"tool_choice names the function {fn['name']!r}, which is not in tools= "
            f"({', '.join(names) or 'no tools given'})"
        )
    return dict(tool_choice)


#: The checked parameters ``build_chat_body`` takes besides messages, model and stream.
CHAT_PARAMETERS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "n",
        "stop",
        "frequency_penalty",
        "presence_penalty",
        "tools",
        "tool_choice",
        "stream_options",
    }
)
#: Body fields built from checked arguments; extra_body= is for provider extras only.
_CHECKED_FIELDS = CHAT_PARAMETERS | {"model", "messages", "stream"}


def build_chat_body(
    messages: Any,
    *,
    model: str,
    stream: bool,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    n: int | None = None,
    stop: Sequence[str] | None = None,
    frequency_penalty: float | None = None,
    presence_penalty: float | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: Any = None,
    stream_options: Mapping[str, Any] | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A checked chat-completions body; a wrong value raises ``ValueError`` naming it."""
    if not isinstance(model, str) or not model:
        raise ValueError(f"model={model!r} must be a non-empty model name")
    body: dict[str, Any] = {"model": model, "messages": check_messages(messages)}
    for name, value in (
        ("temperature", temperature),
        ("top_p", top_p),
        ("frequency_penalty", frequency_penalty),
        ("presence_penalty", presence_penalty),
    ):
        if value is not None:
            body[name] = _check_float(name, value)
    if max_tokens is not None:
        body["max_tokens"] = _check_int("max_tokens", max_tokens, 1)
    if n is not None:
        body["n"] = _check_int("n", n, 1)
    if stop is not None:
        if (
            isinstance(stop, str)
            or not isinstance(stop, Sequence)
            or not all(isinstance(s, str) and s for s in stop)
        ):
            raise ValueError(
                f"stop={stop!r} must be a list of non-empty strings, e.g. stop=['\\n\\n']"
            )
        body["stop"] = list(stop)
    checked_tools = _check_tools(tools) if tools is not None else None
    if checked_tools is not None:
        body["tools"] = checked_tools
    if tool_choice is not None:
        body["tool_choice"] = _check_tool_choice(tool_choice, checked_tools)
    if stream_options is not None:
        if not stream:
            raise ValueError("stream_options= is only allowed with stream=True")
        if not isinstance(stream_options, Mapping) or not isinstance(
            stream_options.get("include_usage", False), bool
        ):
            raise ValueError(
                f"stream_options={stream_options!r} must be like {{'include_usage': True}}"
            )
        body["stream_options"] = dict(stream_options)
    if extra_body is not None:
        if not isinstance(extra_body, Mapping):
            raise ValueError(f"extra_body={extra_body!r} must be a dict of extra body fields")
        clash = sorted(set(extra_body) & _CHECKED_FIELDS)
        if clash:
            raise ValueError(
                f"extra_body= may not set {', '.join(clash)}: pass "
                f"{', '.join(f'{c}=' for c in clash)} directly, where it is checked"
            )
        body.update(extra_body)
    if stream:
        body["stream"] = True
    return body


def last_user_message(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The newest user message's text: what an answer is an answer to."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(
                    str(p.get("text", "")) for p in content if isinstance(p, Mapping)
                ).strip()
    return None
