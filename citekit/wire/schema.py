"""Structured output: a JSON schema checked against Maritaca's documented limits, the request
field that carries it, and the reply's text decoded and checked against it.

Maritaca's Structured Outputs page (providers.md, "Maritaca AI: Chat Completions additions")
supports string, number, boolean, integer, object, array, enum, anyOf and oneOf, and refuses
minLength, maxLength, pattern, format, minimum, maximum, multipleOf, min/maxItems, uniqueItems,
min/maxProperties, allOf, patternProperties, unevaluated*, propertyNames and contains; at most
100 properties and 5 nesting levels; names, definitions, enum and const values together under
15,000 characters; at most 500 enum values (an all-string enum of more than 250 values under
7,500 characters). ``check_schema`` raises ``ValueError`` for each before anything is sent;
``validate`` checks a decoded value against that same subset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Schema", "check_schema", "decode", "schema_of", "validate"]

UNSUPPORTED = frozenset(
    {
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "allOf",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "contains",
    }
)
MAX_PROPERTIES = 100
MAX_NESTING = 5
MAX_SCHEMA_CHARS = 15_000
MAX_ENUM_VALUES = 500
LONG_STRING_ENUM = 250
MAX_LONG_ENUM_CHARS = 7_500
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class Schema:
    """A checked schema: its ``name``, the JSON ``schema``, and the pydantic ``model`` it came
    from (None for a dict)."""

    name: str
    schema: Mapping[str, Any]
    model: Any = None

    def response_format(self) -> dict[str, Any]:
        """Chat Completions' ``response_format`` (the Responses API's ``text.format`` is made
        from it: ``maritaca_responses.text_format``)."""
        inner = {"name": self.name, "strict": True, "schema": dict(self.schema)}
        return {"type": "json_schema", "json_schema": inner}


def schema_of(schema: Any) -> Schema:
    """``schema=`` as a checked ``Schema``: a JSON schema dict, or a pydantic model class."""
    if isinstance(schema, Schema):
        return schema
    model = None
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        model, name = schema, schema.__name__
        schema = schema.model_json_schema()
    elif isinstance(schema, Mapping):
        title = schema.get("title")
        name = title if isinstance(title, str) and title.strip() else "answer"
    else:
        raise ValueError(f"schema={schema!r} must be a JSON schema dict or a pydantic model class")
    check_schema(schema)
    return Schema(_NAME.sub("_", name)[:64] or "answer", dict(schema), model)


def check_schema(schema: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` for a schema over Maritaca's documented limits."""
    count = {"properties": 0, "chars": 0, "enum": 0}

    def walk(node: Any, path: str, depth: int) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}[{i}]", depth)
            return
        if not isinstance(node, Mapping):
            return
        bad = sorted(k for k in node if k in UNSUPPORTED)
        if bad:
            raise ValueError(
                f"schema{path} uses {', '.join(bad)}, which Maritaca's structured output does "
                "not support: leave it out and check the value after"
            )
        nested = depth + (1 if node.get("type") == "object" or "properties" in node else 0)
        if nested > MAX_NESTING:
            raise ValueError(
                f"schema{path} nests objects {nested} levels deep; Maritaca allows {MAX_NESTING}"
            )
        for key, value in node.items():
            at = f"{path}[{key!r}]"
            if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
                if key == "properties":
                    count["properties"] += len(value)
                count["chars"] += sum(len(str(name)) for name in value)
                for name, sub in value.items():
                    walk(sub, f"{at}[{name!r}]", nested)
            elif key == "enum" and isinstance(value, list):
                _check_enum(value, at)
                count["enum"] += len(value)
                count["chars"] += sum(len(str(v)) for v in value)
            elif key == "const":
                count["chars"] += len(str(value))
            else:
                walk(value, at, nested)

    walk(schema, "", 0)
    if count["properties"] > MAX_PROPERTIES:
        raise ValueError(
            f"schema has {count['properties']} properties; Maritaca allows {MAX_PROPERTIES}"
        )
    if count["enum"] > MAX_ENUM_VALUES:
        raise ValueError(
            f"schema has {count['enum']} enum values; Maritaca allows {MAX_ENUM_VALUES}"
        )
    if count["chars"] >= MAX_SCHEMA_CHARS:
        raise ValueError(
            f"schema's names, definitions, enum and const values hold {count['chars']:,} "
            f"characters; Maritaca allows under {MAX_SCHEMA_CHARS:,}"
        )


def _check_enum(values: list[Any], path: str) -> None:
    if len(values) > MAX_ENUM_VALUES:
        raise ValueError(
            f"schema{path} has {len(values)} values; Maritaca allows {MAX_ENUM_VALUES}"
        )
    if len(values) > LONG_STRING_ENUM and all(isinstance(v, str) for v in values):
        size = sum(len(v) for v in values)
        if size >= MAX_LONG_ENUM_CHARS:
            raise ValueError(
                f"schema{path} is an enum of {len(values)} strings holding {size:,} characters; "
                f"Maritaca allows under {MAX_LONG_ENUM_CHARS:,} for more than {LONG_STRING_ENUM}"
            )


# -- the reply ------------------------------------------------------------------------------
_TYPES: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    seen = 0
    while isinstance(ref, str) and ref.startswith("#/") and seen < 32:
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return {}
        node, ref, seen = target, target.get("$ref"), seen + 1
    return node


def validate(
    value: Any, schema: Mapping[str, Any], root: Mapping[str, Any] | None = None, path: str = ""
) -> str | None:
    """What is wrong with ``value`` under ``schema`` (the documented subset), or None."""
    root = schema if root is None else root
    node = _resolve(schema, root)
    where = path or "the value"
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    if kinds and not any(_TYPES.get(k, lambda v: True)(value) for k in kinds):
        return f"{where} is {type(value).__name__}, not {' or '.join(kinds)}"
    if "enum" in node and isinstance(node["enum"], list) and value not in node["enum"]:
        return f"{where} is {value!r}, not one of the enum values"
    if "const" in node and value != node["const"]:
        return f"{where} is {value!r}, not {node['const']!r}"
    for key, needs_one in (("anyOf", False), ("oneOf", True)):
        options = node.get(key)
        if isinstance(options, list) and options:
            fits = sum(
                validate(value, o, root, path) is None for o in options if isinstance(o, Mapping)
            )
            if fits == 0 or (needs_one and fits > 1):
                return f"{where} fits {fits} of the {key} choices"
    if isinstance(value, dict):
        props = node.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = node.get("required")
        for name in required if isinstance(required, list) else ():
            if name not in value:
                return f"{where} has no {name!r}"
        extra = node.get("additionalProperties", True)
        for name, item in value.items():
            at = f"{path}.{name}" if path else name
            if name in props and isinstance(props[name], Mapping):
                problem = validate(item, props[name], root, at)
                if problem:
                    return problem
            elif extra is False:
                return f"{where} has {name!r}, which the schema does not allow"
            elif isinstance(extra, Mapping):
                problem = validate(item, extra, root, at)
                if problem:
                    return problem
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for i, item in enumerate(value):
            problem = validate(item, node["items"], root, f"{path}[{i}]")
            if problem:
                return problem
    return None


def decode(text: str, schema: Schema) -> tuple[Any, str | None]:
    """The reply's text decoded and checked: ``(value, None)``, or ``(None, note)`` saying why
    not (not JSON, or not valid for the schema). A pydantic model gives its instance."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"Structured output: the reply is not JSON ({exc}); the text is kept"
    problem = validate(value, schema.schema)
    if problem:
        return None, f"Structured output: the reply is not valid for the schema ({problem})"
    if schema.model is not None:
        try:
            return schema.model.model_validate(value), None
        except Exception as exc:  # pydantic's ValidationError, whatever its version
            first = str(exc).splitlines()[0]
            return None, f"Structured output: {schema.name} did not accept the reply ({first})"
    return value, None
