"""A loopback server that speaks Magisterium's, Maritaca's and GPTBots' wire protocols.

It answers from the recorded-format samples in ``sample_data/`` so that tests, notebooks,
benchmarks and the offline demo run citekit's real clients over real HTTP, without a key or a
network. Scenarios add latency, slow streams, long synthetic streams and faults (HTTP errors,
connection resets, malformed bodies, HTML error pages, stalls, GPTBots error codes)::

    from citekit.testing import serve

    with serve() as srv:
        ok = srv.base_url("magisterium")
        flaky = srv.base_url("magisterium", fault="status", status=429, retry_after=1, times=2)
        srv.requests  # what the clients sent

Run ``python -m citekit.testing`` to serve until Ctrl-C.
"""

from __future__ import annotations

from ._errors import GPTBOTS_MESSAGES
from ._samples import Sample, SampleSet, default_data_dir
from ._scenario import Endpoint, Fault, RecordedRequest, Scenario, ScenarioOptions
from ._server import ProviderServer, serve

__all__ = [
    "GPTBOTS_MESSAGES",
    "Endpoint",
    "Fault",
    "ProviderServer",
    "RecordedRequest",
    "Sample",
    "SampleSet",
    "Scenario",
    "ScenarioOptions",
    "default_data_dir",
    "serve",
]
