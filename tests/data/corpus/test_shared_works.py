"""One question, three providers, the same works: the recorded subsidiarity answers of
Magisterium (02), Maritaca's web search (11, Portuguese) and a GPTBots knowledge base (14)."""

from __future__ import annotations

import polars as pl

import citekit as ck
from citekit.testing import ProviderServer

QUESTION = "What is the principle of subsidiarity?"
PERGUNTA = "O que é o princípio da subsidiariedade na doutrina social da Igreja?"


def subsidiarity_answers(server: ProviderServer) -> list[ck.Answer]:
    mg = ck.Magisterium(api_key="k", base_url=server.base_url("magisterium"))
    mt = ck.Maritaca(api_key="k", base_url=server.base_url("maritaca"))
    gb = ck.GPTBots(api_key="k", base_url=server.base_url("gptbots"))
    return [
        mg.ask(QUESTION, display=False),
        mt.ask(PERGUNTA, web_search=True, display=False),
        gb.ask(QUESTION, citations=True, display=False),
    ]


def test_the_providers_cite_the_same_works(server: ProviderServer) -> None:
    answers = subsidiarity_answers(server)
    assert [a.sample for a in answers] == [
        "magisterium/02_subsidiarity",
        "maritaca/11_subsidiariedade_web",
        "gptbots/14_subsidiarity_knowledge_base",
    ]
    src = ck.sources_frame(answers)
    providers = {"magisterium", "maritaca", "gptbots"}
    assert set(src["provider"]) == providers
    # the Catechism under its English, Portuguese and knowledge-base titles: one work
    catechism = src.filter(pl.col("work_id") == "catechism")
    assert set(catechism["provider"]) == providers
    # one vatican.va document in English and in Portuguese (a fragment on one): one work
    for document in ("compendio-dott-soc", "quadragesimo-anno", "centesimus-annus"):
        rows = src.filter(pl.col("source_url").str.contains(document, literal=True))
        assert rows["work_id"].n_unique() == 1, document
        assert set(rows["provider"]) == providers, document
    # GPTBots' data_id is the document's: a corner citation and the chunks of its document
    # are one work
    per_document = (
        src.filter(pl.col("provider") == "gptbots")
        .group_by("data_id")
        .agg(pl.col("work_id").n_unique().alias("works"), pl.col("kind").n_unique().alias("kinds"))
    )
    assert per_document["works"].to_list() == [1] * per_document.height
    assert per_document["kinds"].max() == 2  # a cited document is also a retrieved chunk
