"""Write the demo notebooks from the cell sources below, so they stay valid and output-free.

Usage::

    python notebooks/_build.py            # (re)write notebooks/*.ipynb
    python notebooks/_build.py --check    # exit 1 when a notebook differs from this script

Every notebook runs offline: without the provider's API key in the environment it starts
``citekit.testing.ProviderServer``, which answers with the recorded samples in ``sample_data/``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str]


def md(text: str) -> Cell:
    return ("markdown", text.strip("\n"))


def code(text: str) -> Cell:
    return ("code", text.strip("\n"))


def offline_note(keys: str) -> Cell:
    return md(
        f"""
> **Offline by default: these are recorded samples, not live answers.** Unless {keys} is set
> in the environment, this notebook sends its requests to citekit's loopback server
> (`citekit.testing.ProviderServer`), which replays the recorded sample answers in
> `sample_data/`. They use each provider's real wire format and travel over real HTTP through
> the same client code, but they were written in advance, and each one is labelled
> "recorded sample". Set the key (and restart the kernel) to ask the real service.
"""
    )


IMPORTS = """
import os

import altair as alt
import polars as pl

import citekit as ck
from citekit import answers_frame, charts, citations_frame, explore, references_frame
from citekit.testing import ProviderServer, SampleSet, default_data_dir

alt.renderers.enable("citekit")  # offline charts: live with tooltips where scripts run, an image elsewhere

samples = SampleSet.load(default_data_dir())
server = ProviderServer().start()  # serves every provider whose key is not set
"""

MAGISTERIUM_CLIENT = """
if os.environ.get("MAGISTERIUM_API_KEY"):
    magisterium = ck.Magisterium()
else:
    magisterium = ck.Magisterium(api_key="offline-demo", base_url=server.base_url("magisterium"))
magisterium
"""

MARITACA_CLIENT = """
if os.environ.get("MARITACA_API_KEY"):
    maritaca = ck.Maritaca()
else:
    maritaca = ck.Maritaca(api_key="offline-demo", base_url=server.base_url("maritaca"))
maritaca
"""

GPTBOTS_CLIENT = """
if os.environ.get("GPTBOTS_API_KEY"):
    gptbots = ck.GPTBots()
else:
    gptbots = ck.GPTBots(api_key="offline-demo", base_url=server.base_url("gptbots"))
gptbots
"""

MAGISTERIUM_QUESTIONS = """
questions = [s.question for s in samples["magisterium"] if "off_topic" not in s.name]
answers = [magisterium.ask(q) for q in questions]
print(f"{len(answers)} answers, {sum(len(a.citations) for a in answers)} citations")
"""


def tour() -> list[Cell]:
    return [
        md(
            """
# A tour of citekit

Ask a provider a question, read the answer with its footnotes, then load every citation into
a polars frame, chart it with altair and browse it in an explorer widget.
"""
        ),
        offline_note("`MAGISTERIUM_API_KEY` (or `GPTBOTS_API_KEY`)"),
        code(IMPORTS),
        code(MAGISTERIUM_CLIENT),
        md("## 1. Ask, and read the answer with its sources"),
        code(
            """
answer = magisterium.ask(
    "What does Catholic social teaching say about the dignity of human work?"
)
answer
"""
        ),
        md(
            """
Each marker such as **[1]** links to its source under the answer (hover it for the title);
open a source to read the passage the answer cites. Several passages of one document share
one number.
"""
        ),
        code(
            """
first = answer.citations[0]
first.marker, first.document_title, first.document_author, first.document_year
"""
        ),
        md("## 2. Many answers, one frame"),
        code(MAGISTERIUM_QUESTIONS),
        code(
            """
cits = citations_frame(answers)
cits.select("marker", "document_author", "document_title", "year", "cited_inline").head(8)
"""
        ),
        code(
            """
answers_frame(answers).select("question", "n_citations", "total_tokens", "sample").head(5)
"""
        ),
        md("## 3. Charts\n\nEach chart function takes a frame and returns an altair chart."),
        code("charts.authors(cits, top=10)"),
        code("charts.years(cits)"),
        md(
            """
## 4. The explorer

Filter by author, year or text; pick a row number to see its passage and the whole answer.
The controls are attributes, so code can drive them too.
"""
        ),
        code("ex = explore(answers)\nex"),
        code(
            """
ex.search.value = "wage"
ex.filtered.select("document_author", "document_title", "cited_text")
"""
        ),
        md(
            """
## 5. Knowledge references (GPTBots)

A GPTBots agent answers from a knowledge base; citekit fetches the chunks it retrieved, with
their relevance scores.
"""
        ),
        code(GPTBOTS_CLIENT),
        code(
            """
reply = gptbots.ask("Why was the Great Wall built?")
reply
"""
        ),
        code('references_frame(reply).select("rank", "document_title", "score")'),
        code("magisterium.close()\ngptbots.close()\nserver.stop()"),
    ]


def magisterium_notebook() -> list[Cell]:
    return [
        md(
            """
# Magisterium AI: answers with citations

Magisterium answers questions about Catholic teaching and cites the passages it used: each
citation names the document, its author and year, the paragraph, and quotes the text.
"""
        ),
        offline_note("`MAGISTERIUM_API_KEY`"),
        code(IMPORTS),
        code(MAGISTERIUM_CLIENT),
        md("## Streaming an answer\n\nWith `stream=True` the text appears as it arrives."),
        code(
            """
answer = magisterium.ask("What is the principle of subsidiarity?", stream=True)
answer.related_questions
"""
        ),
        md(
            """
## Citations

`document_index` is zero-based; the inline marker is one-based. Several citations can share a
document (different paragraphs of it): `citation_groups()` gathers them by marker.
"""
        ),
        code(
            """
groups = answer.citation_groups()
{marker: [c.document_reference for c in group] for marker, group in groups.items()}
"""
        ),
        code(
            """
citations_frame(answer).select(
    "marker", "document_index", "document_title", "document_reference", "cited_inline"
)
"""
        ),
        md(
            """
## When the answer is withheld

Off-topic questions are blocked by Magisterium's safety settings. With `"response": False`
the answer comes back empty with `finish_reason == "content_filter"`, a note and a
`ContentFilteredWarning`.
"""
        ),
        code(
            """
blocked = magisterium.ask(
    "Can you give me a recipe for Neapolitan pizza dough?",
    safety_settings={"CATEGORY_NON_CATHOLIC": {"threshold": "BLOCK_ALL", "response": False}},
)
blocked.finish_reason, blocked.notes
"""
        ),
        md("## Every sample question, in several languages"),
        code(MAGISTERIUM_QUESTIONS),
        code(
            """
cits = citations_frame(answers)
charts.documents(cits, top=12)
"""
        ),
        code("charts.citations_per_answer(answers_frame(answers))"),
        code("explore(answers)"),
        md(
            """
## Search without asking

`search()` calls Magisterium's search API (`POST /search`): documents for a query, best first,
without an answer around them. `category` narrows it to `"magisterial"` or `"scholarly"`
documents. The result lists its links here and becomes a frame with the same column names as
the citations.
"""
        ),
        code(
            """
found = magisterium.search("principle of subsidiarity", num_results=5, category="magisterial")
found
"""
        ),
        code('found.frame().select("rank", "document_title", "document_author", "year", "score")'),
        code("magisterium.close()\nserver.stop()"),
    ]


def maritaca_notebook() -> list[Cell]:
    return [
        md(
            """
# Maritaca AI: Sabiá models

Maritaca's API is OpenAI-compatible. Its plain answers carry no citations; with its built-in
tools on (`web_search`, `data_ocean`, `code_execution`) it answers with sources, the links of its
text, which citekit lists as the answer's sources. This notebook looks at both, and at what every
answer carries: the text, several choices (`n`), tool calls, and token usage.
"""
        ),
        offline_note("`MARITACA_API_KEY`"),
        code(IMPORTS),
        code(MARITACA_CLIENT),
        code(
            """
answer = maritaca.ask("Como funciona o Pix e por que ele se popularizou tão rápido no Brasil?")
answer
"""
        ),
        md(
            """
## Web search: an answer with sources

Maritaca searches the web and reads pages on its side, then answers with Markdown links: each
distinct link becomes a source, numbered in order of first appearance. `usage.tools` says what the
search cost. Built-in tools do not stream (Maritaca refuses it), so citekit refuses
`stream=True` with them before sending anything.
"""
        ),
        code(
            """
web = maritaca.ask("Pesquise na web: o que mudou no Pix em 2025?", web_search=True)
web
"""
        ),
        code(
            """
[(c.marker, c.document_title, c.source_url) for c in web.citations], web.usage.tools
"""
        ),
        md(
            """
With `code_execution=True` the files the code made come back with the answer (`answer.files`);
images show in the answer, and `.save()` writes any of them to disk.
"""
        ),
        code(
            """
chart = maritaca.ask(
    "Execute código: faça um gráfico de barras da população das regiões do Brasil no Censo 2022.",
    code_execution=True,
)
chart
"""
        ),
        code("[(f.name, f.mime_type, f.size_bytes) for f in chart.files]"),
        md(
            """
## Chat with messages and parameters

`chat()` takes the whole message list and the chat-completions parameters. Here every recorded
sample request is sent again, as it was recorded.
"""
        ),
        code(
            """
answers = []
for sample in samples["maritaca"]:
    request = dict(sample.request)
    messages = request.pop("messages")
    answers.append(maritaca.chat(messages, **request))
[(a.model, a.finish_reason, len(a.choices)) for a in answers]
"""
        ),
        md("## Several choices and tool calls"),
        code(
            """
several = next(a for a in answers if len(a.choices) > 1)
[choice.text[:80] for choice in several.choices]
"""
        ),
        code(
            """
tools = next(a for a in answers if a.tool_calls)
[(call.name, call.parsed_arguments()) for call in tools.tool_calls]
"""
        ),
        md(
            """
## Usage as a frame

`answers_frame` has one row per answer, with what the built-in tools did; the web-sourced
answers give `citations_frame` a row per linked source.
"""
        ),
        code(
            """
usage = answers_frame(answers).select(
    "answer_id", "model", "finish_reason", "prompt_tokens", "completion_tokens", "sample"
)
usage
"""
        ),
        code(
            """
citations_frame(answers).select("question", "marker", "document_title", "source_url")
"""
        ),
        code(
            """
tokens = usage.unpivot(
    ["prompt_tokens", "completion_tokens"],
    index="sample",
    variable_name="kind",
    value_name="tokens",
)
alt.Chart(tokens, title="Tokens per answer").mark_bar().encode(
    x=alt.X("tokens:Q", title="Tokens", stack=True),
    y=alt.Y("sample:N", title=None),
    color=alt.Color("kind:N", title=None),
)
"""
        ),
        md(
            """
## The Responses API and structured output

Maritaca recommends its Responses API for new projects: `api="responses"` (on the client or
per call) gives the same `Answer`. With `schema=` (a JSON schema, or a pydantic model) the
model answers in JSON and `answer.parsed` holds the decoded value, checked against the schema
(None, with a note saying why, when the reply is not valid JSON for it).
"""
        ),
        code(
            """
responses = maritaca.ask("O que é o Pix?", api="responses")
responses.text[:120], responses.sample
"""
        ),
        code(
            """
summary = {
    "type": "object",
    "properties": {"resumo": {"type": "string"}},
    "required": ["resumo"],
    "additionalProperties": False,
}
structured = maritaca.ask("O que é o Pix?", schema=summary)
structured.parsed["resumo"][:120]
"""
        ),
        md(
            """
## A large study as a batch

Maritaca's Batch API takes up to 50,000 questions as one file, at half the price, answered
within 24 hours. `maritaca.batch(...)` uploads them and returns a job; `job.wait()` follows
it, and `job.answers()` gives one answer per question, in the order asked (None where that
request failed, with the reason in `job.errors()`). `maritaca.batch_job(job.id)` picks the
job up again in a later session. (The loopback server finishes a batch in about 2 seconds.)
"""
        ),
        code(
            """
job = maritaca.batch(["O que é o Pix?", "Como fazer pão de queijo?"], max_tokens=300)
job.wait(poll=0.5)
[(a.batch_id, a.text[:60]) for a in job.answers() if a is not None]
"""
        ),
        code("maritaca.close()\nserver.stop()"),
    ]


def gptbots_notebook() -> list[Cell]:
    return [
        md(
            """
# GPTBots: answers and the knowledge behind them

A GPTBots agent answers from its knowledge base. After each reply citekit fetches the chunks
the agent retrieved (`/v1/correlate/dataset`), ranked, with a relevance score. They are the
answer's sources, not footnotes: unless asked for corner citations, the text carries no markers.
"""
        ),
        offline_note("`GPTBOTS_API_KEY` (and `GPTBOTS_ENDPOINT`)"),
        code(IMPORTS),
        code(GPTBOTS_CLIENT),
        code(
            """
reply = gptbots.ask("Why was the Great Wall built?")
reply
"""
        ),
        code(
            """
[(ref.rank, ref.data_name, ref.score) for ref in reply.references]
"""
        ),
        md(
            """
## Footnotes: corner citations

Asked with `citations=True` (or `ck.GPTBots(citations=True)` for every call), the agent marks
its text with corner citations (`$[1]$`) and returns the fragment each mark cites. citekit shows
them as footnotes, as it does Magisterium's: click a number to read the fragment and open its file.
"""
        ),
        code(
            """
cited = gptbots.ask("What does the travel policy say about booking flights?", citations=True)
cited
"""
        ),
        code(
            """
citations_frame([cited]).select("marker", "document_title", "cited_inline", "cited_text")
"""
        ),
        md("## Every sample question"),
        code(
            """
replies = [gptbots.ask(s.question, citations=True) for s in samples["gptbots"]]
refs = references_frame(replies)
refs.group_by("document_title").agg(chunks=pl.len(), best=pl.col("score").max()).sort(
    "best", descending=True
).head(10)
"""
        ),
        md(
            """
The red rule marks a relevance threshold: chunks to its left were retrieved but matched the
question weakly.
"""
        ),
        code("charts.scores(refs, threshold=0.6, top=12)"),
        md("An agent can answer without any knowledge chunk:"),
        code(
            """
[(r.question, len(r.references or ()), r.notes) for r in replies if not r.references]
"""
        ),
        code("explore(replies)"),
        md(
            """
## What the agent already answered

`gptbots.conversations()` lists the agent's conversations and `gptbots.history(id)` gives back
every answer of one, with its question and its knowledge chunks: what an agent answered
before comes into the same frames without being asked again.
"""
        ),
        code(
            """
past = gptbots.conversations()
[(c["subject"], c["message_count"]) for c in past[:3]]
"""
        ),
        code(
            """
history = gptbots.history(reply.conversation_id)
[(a.question, len(a.references or ())) for a in history], references_frame(history).select(
    "rank", "document_title", "score"
).head(5)
"""
        ),
        code("gptbots.close()\nserver.stop()"),
    ]


def where_answers_come_from() -> list[Cell]:
    return [
        md(
            """
# Where do the answers come from?

A teaching demo. An AI answer that cites its sources lets us ask a historian's questions:
*whose* words is it built on, and *from when*? We ask Magisterium AI a set of questions about
Catholic teaching and read every source as one corpus: the same encyclical cited in English and
in Portuguese is one work, and Pope Francis is one author whether a citation calls him Francis,
Francesco or Franziskus. Then we put one question to three providers side by side.
"""
        ),
        offline_note("`MAGISTERIUM_API_KEY`, `MARITACA_API_KEY`, `GPTBOTS_API_KEY`"),
        code(IMPORTS),
        code(MAGISTERIUM_CLIENT),
        code(MAGISTERIUM_QUESTIONS),
        md(
            """
One of the answers, as a reader sees it: each footnote leads to a document, its author, its
year and the quoted passage.
"""
        ),
        code("answers[3]"),
        md(
            """
## Every source, with its work and author

`sources_frame` gives one row per source. Next to what the provider wrote (`document_title`,
`document_author`) stand the work and the author it belongs to (`work`, `author`): citekit
recognises translations, paragraphs and other spellings of one work (its alias table knows the
Catechism, the Council documents, the encyclicals and the popes in seven languages).
"""
        ),
        code(
            """
src = ck.sources_frame(answers)
src.select("document_author", "author", "document_title", "work", "year").head(8)
"""
        ),
        code(
            """
# The names each author was cited under
(
    src.drop_nulls("author")
    .group_by("author")
    .agg(citations=pl.len(), cited_as=pl.col("document_author").drop_nulls().unique().sort())
    .sort("citations", descending=True)
    .head(8)
)
"""
        ),
        md(
            """
## Whose words?

Count citations per author, each person or body once. Councils and the Catechism appear as
authors too: they speak for the Church as a whole.
"""
        ),
        code("charts.authors(src, top=12)"),
        md(
            """
## Which works?

One row per work: how often it is cited, by how many answers, under which titles and in which
languages.
"""
        ),
        code(
            """
works = ck.works_frame(src)
works.select("work", "author", "year", "citations", "answers", "languages").head(10)
"""
        ),
        code("charts.works(src, top=12)"),
        md(
            """
## From which centuries?

`year` is read from the provider's `document_year` ("1265-1268" gives 1265, "c. 1685" gives
1685). Many answers lean on the last hundred years, yet quote voices many centuries old.
"""
        ),
        code('charts.years(src, by="century")'),
        code(
            """
century = (pl.col("year") // 100 + 1).alias("century")  # as in the chart: 1900s = 20th
(
    src.drop_nulls("year")
    .group_by(century)
    .agg(citations=pl.len(), authors=pl.col("author").drop_nulls().unique().sort())
    .sort("century")
)
"""
        ),
        md(
            """
## The oldest voice in each answer

For each question, the earliest work it cites.
"""
        ),
        code(
            """
(
    src.drop_nulls("year")
    .sort("year")
    .group_by("question", maintain_order=True)
    .first()
    .select("question", "author", "work", "year")
    .sort("year")
)
"""
        ),
        md(
            """
## Which works are read together?

Two works cited in the same answer are *co-cited*. The pairs that come back answer after answer
show which texts the answers treat as belonging together.
"""
        ),
        code(
            """
co = ck.cocitation_frame(src)
co.select("name_a", "name_b", "answers", "jaccard").head(8)
"""
        ),
        code("charts.cocitation(co, top=12)"),
        md(
            """
## One question, three providers

The same question to Magisterium AI, to Maritaca AI with its web search and to a GPTBots agent
with a knowledge base: each answers from its own sources, and the works they share are marked.
A provider that fails shows its error in its column; the others still answer.
"""
        ),
        code(MARITACA_CLIENT),
        code(
            GPTBOTS_CLIENT.replace("ck.GPTBots()", "ck.GPTBots(citations=True)").replace(
                'base_url=server.base_url("gptbots"))',
                'base_url=server.base_url("gptbots"),\n                          citations=True)',
            )
        ),
        code(
            """
cmp = ck.compare(
    "What is the principle of subsidiarity?",
    [magisterium, (maritaca, {"web_search": True}), gptbots],
)
cmp
"""
        ),
        code("cmp.overlap()  # works each pair of providers shares, and their Jaccard overlap"),
        md(
            """
## Is every source used in the text?

`health_frame` reads each answer sentence by sentence: how many sentences carry a footnote
(`coverage`), which sources are listed but never marked (`unmarked`), which markers point to no
source (`unlisted`), and which works are cited under two numbers (`same_work`).
"""
        ),
        code(
            """
health = ck.health_frame(answers)
health.select(
    "question", "sentences", "cited_sentences", "coverage", "unmarked", "unlisted", "same_work"
).sort("coverage")
"""
        ),
        md(
            """
## Does the source say so?

A footnote says *where* a sentence comes from; it does not say that the passage there says
what the sentence says. `ck.show_support` reads each sentence against the passage it cites and
tints it: **green** supported, **amber** partial, **red** unsupported, **grey** a source with no
passage to read (a web page cited by a link); a sentence no source cites is left plain (∅).
Hover a marker for its score and the start of the passage that fits best; under the text, each
cited sentence opens that passage with the words it shares marked.

The score counts what the two share (words compared by their stem, quotes, numbers) and lowers
it for a changed number or a "not" on one side only. That is *support*, not verification: a
passage can share every word and still not say it, and one in another language shares few
words whatever it says. It is a place to start reading, not a verdict on the answer.
"""
        ),
        code(
            """
sunday = magisterium.ask("What does the Church teach about Sunday rest?")
ck.show_support(sunday)
"""
        ),
        md(
            """
Four sentences to read closely:

1. *"On Sundays the faithful are to refrain from work..."* cites the Catechism, whose passage
   says it almost word for word: **supported**.
2. *"Leo XIII taught that work and labor need not cease on Sundays..."* cites *Rerum novarum*,
   whose passage uses the same words to say the opposite ("the obligation of the cessation from
   work and labor on Sundays"): **unsupported**. Shared words alone would have passed it.
3. *"The Lord's Day also leaves room for the works of mercy..."* cites *Laborem exercens* [2], which
   shares a word or two but says nothing of the kind, while the Catechism [1], cited elsewhere in
   the same answer, says exactly this: a **misattributed** marker (flagged "[1] fits better").
4. *"Many parishes today keep Sunday afternoons free..."* cites nothing: **no source**.

The same judgement as a frame, one row per sentence and passage:
"""
        ),
        code(
            """
ck.support_frame(sunday).select(
    "sentence_index", "marker", "support", "verdict", "quote_found", "best_source", "misattributed"
)
"""
        ),
        md(
            """
Over every answer: how much of what each work is cited for does its passage say? And which
claims do two providers support with the same work?
"""
        ),
        code(
            """
support = ck.support_frame([*answers, *cmp.answered.values()])
charts.support(support, by="work", top=10)
"""
        ),
        code('charts.support(support, by="provider")'),
        code(
            """
cmp.support().filter(pl.col("supported_with").list.len() > 0).select(
    "label", "work", "sentence", "verdict", "support"
)
"""
        ),
        md(
            """
## Explore for yourself

Narrow the year range to the Middle Ages, pick an author, or search for a word; the chart and
the table follow, and a row number shows that passage inside its answer.
"""
        ),
        code('ex = explore(answers)\nex.chart_kind.value = "years"\nex'),
        md(
            """
### Questions to discuss

1. Which authors are quoted across many different questions, and which only once?
2. Which centuries are missing entirely? Why might that be?
3. Which works are always read together? What do the three providers agree on?
4. Pick an answer: would you reach the same conclusion reading only its oldest source?
5. Find a red sentence: does its passage say something else, or the same thing in other words?
"""
        ),
        code("magisterium.close()\nmaritaca.close()\ngptbots.close()\nserver.stop()"),
    ]


NOTEBOOKS = {
    "01_tour.ipynb": tour,
    "02_magisterium.ipynb": magisterium_notebook,
    "03_maritaca.ipynb": maritaca_notebook,
    "04_gptbots.ipynb": gptbots_notebook,
    "05_where_answers_come_from.ipynb": where_answers_come_from,
}


def build(name: str) -> nbformat.NotebookNode:
    """The notebook ``name`` (a key of ``NOTEBOOKS``), validated, without outputs."""
    cells = [
        new_markdown_cell(text) if kind == "markdown" else new_code_cell(text)
        for kind, text in NOTEBOOKS[name]()
    ]
    for number, cell in enumerate(cells):
        cell["id"] = f"{Path(name).stem[:2]}-{number:02d}"  # stable ids: clean diffs
    nb = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(nb)
    return nb


def main() -> int:
    parser = argparse.ArgumentParser(description="Write (or check) the demo notebooks.")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    stale = []
    for name in NOTEBOOKS:
        text = nbformat.writes(build(name)) + "\n"
        path = HERE / name
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date (run python notebooks/_build.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
