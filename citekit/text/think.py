"""``<think>...</think>`` blocks: reasoning a model writes inline, taken out of an answer's text.

No provider documents them, but a reasoning model inside an agent writes them into the text
(seen in a public GPTBots client, which splits them out of the Text deltas and keeps a tag cut
across chunks in a buffer: providers.md, "``<think>`` tags"). ``ThinkSplitter`` does that for
a stream, holding back what may be the start of a tag until the next chunk tells; ``split_thoughts``
is the same splitter run over a whole text, so a stream and its saved text agree however the
stream was cut. Every accumulator and every parser of an answer's text uses these two.

The rules: a block runs from ``<think>`` to ``</think>`` (one thought, stripped of surrounding
blanks; an empty one is dropped); a block still open when the text ends is a thought too; a
``</think>`` with no block open is dropped; blanks right after a block are dropped, so
``"<think>...</think>\\n\\nAnswer"`` reads ``"Answer"``. Markers inside a block are no longer in
the text, so they are not citations.
"""

from __future__ import annotations

__all__ = ["ThinkSplitter", "split_thoughts"]

OPEN, CLOSE = "<think>", "</think>"


def _held_back(text: str, start: int, tags: tuple[str, ...]) -> int:
    """How many of ``text[start:]``'s last characters may be the start of one of ``tags``."""
    most = min(len(text) - start, max(len(t) for t in tags) - 1)
    for size in range(most, 0, -1):
        tail = text[len(text) - size :]
        if any(tag.startswith(tail) for tag in tags):
            return size
    return 0


class ThinkSplitter:
    """Text chunks in, the answer's text out (``feed``); the thoughts collect in ``thoughts``.

    ``feed`` returns the text a chunk adds, which may be less than the chunk: a trailing ``<``,
    ``<th``, ``</thi`` is held until the next chunk (or ``flush``) shows whether it is a tag.
    A chunk with no ``<`` outside a block costs one scan.
    """

    __slots__ = ("_after", "_held", "_inside", "_started", "_thought", "thoughts")

    def __init__(self) -> None:
        self._held = ""
        self._inside = False
        self._after = False  # after blocks that open the text: blanks are dropped
        self._started = False  # some text has been given out
        self._thought: list[str] = []
        #: The complete thoughts so far, in order.
        self.thoughts: list[str] = []

    def feed(self, chunk: str) -> str:
        if not (self._held or self._inside or self._after) and "<" not in chunk:
            if chunk:
                self._started = True
            return chunk
        text, self._held = self._held + chunk, ""
        out: list[str] = []
        i, end = 0, len(text)
        while i < end:
            if self._inside:
                j = text.find(CLOSE, i)
                if j < 0:
                    keep = _held_back(text, i, (CLOSE,))
                    self._thought.append(text[i : end - keep])
                    self._held = text[end - keep :]
                    break
                self._thought.append(text[i:j])
                self._close()
                i = j + len(CLOSE)
                continue
            if self._after:
                while i < end and text[i].isspace():
                    i += 1
                if i == end:
                    break
                self._after = False
            j, k = text.find(OPEN, i), text.find(CLOSE, i)
            if j < 0 and k < 0:
                keep = _held_back(text, i, (OPEN, CLOSE))
                self._give(out, text[i : end - keep])
                self._held = text[end - keep :]
                break
            if j >= 0 and (k < 0 or j < k):
                self._give(out, text[i:j])
                self._inside = True
                i = j + len(OPEN)
            else:  # a closing tag with no block open: dropped
                self._give(out, text[i:k])
                i = k + len(CLOSE)
        return "".join(out)

    def feed_all(self, chunks: list[str]) -> list[str]:
        """``feed`` of each chunk in turn, what each gives: the chunks themselves, after one
        scan of them all, when no tag is among them or held from before."""
        if not (self._held or self._inside or self._after) and "<" not in "".join(chunks):
            if not self._started and any(chunks):
                self._started = True
            return chunks
        return [self.feed(chunk) for chunk in chunks]

    def flush(self) -> str:
        """The end of the text: what was held back is text (or, in an open block, thought)."""
        held, self._held = self._held, ""
        if self._inside:
            self._thought.append(held)
            self._close()
            return ""
        return held

    def _give(self, out: list[str], piece: str) -> None:
        if piece:
            out.append(piece)
            self._started = True

    def _close(self) -> None:
        thought = "".join(self._thought).strip()
        self._thought = []
        self._inside = False
        self._after = not self._started
        if thought:
            self.thoughts.append(thought)


def split_thoughts(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` without its ``<think>`` blocks, and the blocks' thoughts in order."""
    if "<" not in text:
        return text, ()
    splitter = ThinkSplitter()
    shown = splitter.feed(text) + splitter.flush()
    return shown, tuple(splitter.thoughts)
