"""One rule for an answer's ``created`` at the edges of what a datetime holds, from the parser
to the log, its frames and a Parquet dataset: a time whose UTC form is no datetime
(``9999-12-31T23:59:59-05:00`` is in the year 10000 in UTC) is no time, as any other time that
cannot be read (``core.fields.representable_time``), and nothing downstream raises."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import citekit as ck
from citekit import Answer
from citekit.core.fields import parse_created
from citekit.store import Log
from citekit.wire.parsers import parse_response
from tests.budget import examples

_OFFSETS = st.builds(
    timezone,
    st.timedeltas(
        min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59)
    ),
)
_AWARE = st.datetimes(timezones=_OFFSETS)
_EDGES = st.one_of(
    st.sampled_from([datetime.min, datetime.max]).flatmap(
        lambda edge: _OFFSETS.map(lambda tz: edge.replace(tzinfo=tz))
    ),
    _AWARE,
)
_CREATED = st.one_of(
    _EDGES.map(datetime.isoformat),
    _EDGES.map(lambda d: d.isoformat().replace("+00:00", "Z")),
    st.datetimes().map(datetime.isoformat),
    st.integers(),
    st.floats(),
    st.integers().map(str),
)
_RUN = itertools.count()


def _chat(created: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-edge",
        "created": created,
        "model": "magisterium-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Yes [^1]."}}],
        "citations": [{"cited_text": "A passage.", "document_index": 0, "document_title": "T"}],
    }


def _utc(value: datetime | None) -> datetime | None:
    return (
        None
        if value is None
        else value.astimezone(UTC)
        if value.tzinfo
        else value.replace(tzinfo=UTC)
    )


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(created=_CREATED, direct=_EDGES)
@example(
    created="9999-12-31T23:59:59-05:00",
    direct=datetime.max.replace(tzinfo=timezone(timedelta(hours=-5))),
)
@example(
    created="0001-01-01T00:00:00+05:00",
    direct=datetime.min.replace(tzinfo=timezone(timedelta(hours=5))),
)
def test_any_created_time_goes_through_the_log_and_a_dataset(
    created: Any, direct: datetime, tmp_path: Path
) -> None:
    run = next(_RUN)
    parsed = parse_response(_chat(created), provider="magisterium", question="q")
    given_time = Answer(provider="magisterium", text="Yes.", question="q", created=direct)
    for answer in (parsed, given_time):
        assert answer.created is None or _utc(answer.created) is not None
    assert parsed.created == parse_created(created)
    log = Log(tmp_path / f"log-{run}.sqlite3")
    log.record(parsed)
    frames = (ck.answers_frame(log), ck.answers_frame([parsed, given_time]), log.frame())
    assert frames[0].get_column("created").to_list() == [_utc(parsed.created)]
    assert frames[1].get_column("created").to_list() == [
        _utc(parsed.created),
        _utc(given_time.created),
    ]
    assert ck.citations_frame(log).height == 1
    folder = tmp_path / f"dataset-{run}"
    ck.to_parquet(log, folder)
    ck.to_parquet([given_time], tmp_path / f"given-{run}")
    scanned = ck.scan_answers(folder).collect()
    assert scanned.get_column("created").to_list() == [_utc(parsed.created)]
    assert isinstance(scanned, pl.DataFrame)
    log.close()
