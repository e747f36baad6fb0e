"""The boundary every call crosses on its way out: the API key taken out of what it gives.

``guarded(flow, secrets)`` is a flow around another (``citekit.wire.flow``) that passes every
op through and changes only what leaves the call: the text deltas it hands on, the value it
returns (an ``Answer``, search results, references) and the exception it raises (message,
fields, partial answer, and the exceptions it was raised from). A server that echoes the key,
in whatever part of a reply, cannot get it into a notebook cell, a traceback, the log or an
exported file, because every one of them is fed from here. The scrubbing itself is
``citekit.core.secrets``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from ..core.secrets import Scrubber, TextScrub, scrub_error, scrub_value, scrubber
from ..model import StreamEvent, TextDelta, TextRead, first_text_only
from .flow import Flow

__all__ = ["guarded"]

T = TypeVar("T")


def guarded(flow: Flow[T], secrets: Iterable[str] | Scrubber) -> Flow[T]:
    """``flow``, with ``secrets`` out of the events it hands on, its result and its errors.

    Text deltas are scrubbed as a stream: a key split across two deltas is held back until
    it is whole, then given as ``***``. ``secrets`` may be the ``Scrubber`` of them (a client
    makes its own once).
    """
    clean = secrets if isinstance(secrets, Scrubber) else scrubber(secrets)
    if not clean:
        return (yield from flow)
    text = TextScrub(clean)
    feed, send = text.feed, flow.send
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            if error is None:
                op = send(value)
            else:
                thrown: BaseException = error
                error = None
                op = flow.throw(thrown)
        except StopIteration as stop:
            tail: list[StreamEvent] = [
                TextDelta(t, choice) for choice, t in text.flush().items() if t
            ]
            if tail:
                yield tail
            result: T = scrub_value(stop.value, clean)
            return result
        except BaseException as exc:  # every error leaves the call here: scrubbed, re-raised
            # Ctrl-C and cancellation too: they carry the partial answer (``.answer``).
            scrub_error(exc, clean)
            raise
        value = None
        if type(op) is list:
            if len(op) == 1 and type(event := op[0]) is TextDelta:  # one delta: the hot path
                shown = feed(event.text, event.choice)
                if shown is not event.text:
                    if not shown:
                        continue
                    op = [TextDelta(shown, event.choice)]
            else:
                op = _events(op, text, clean)
                if not op:
                    continue
        try:
            value = yield op
        except GeneratorExit:
            flow.close()
            raise
        except BaseException as exc:  # sent back into the flow, which decides
            error = exc


def _events(events: list[StreamEvent], text: TextScrub, clean: Scrubber) -> list[StreamEvent]:
    joined = first_text_only(events)  # the usual read, told in C (no Python per event)
    if joined is not None:
        return _read(events, joined, text)
    out: list[StreamEvent] = []
    for event in events:
        if type(event) is TextDelta:
            shown = text.feed(event.text, event.choice)
            if shown is event.text:  # the usual case: the event as it came
                out.append(event)
            elif shown:
                out.append(TextDelta(shown, event.choice))
        else:
            out.append(scrub_value(event, clean))
    return out


def _read(events: list[StreamEvent], joined: str, text: TextScrub) -> list[StreamEvent]:
    """The text deltas of one read (``joined``, their text), scrubbed as one piece (one look
    at the read, not one per delta; scrubbing does not depend on where a text is cut): the
    events as they came when nothing changed, those that fit when only a tail is held back,
    else the scrubbed text; a ``TextRead``, which carries the text it shows."""
    shown = text.feed(joined, 0)
    if shown is joined:
        return TextRead(events, shown)
    if not joined.startswith(shown):  # a key was replaced: one delta of the scrubbed text
        return TextRead([TextDelta(shown, 0)], shown) if shown else []
    # Only a tail is held back (shorter than a key's longest form): the deltas that end
    # within ``shown`` go as they came, found from the end, and a piece of the next one.
    kept, size = len(events), len(joined)
    while size > len(shown):
        kept -= 1
        size -= len(events[kept].text)  # type: ignore[union-attr]
    out = TextRead(events[:kept], shown)
    if size < len(shown):
        out.append(TextDelta(shown[size:], 0))
    return out
