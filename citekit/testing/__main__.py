"""``python -m citekit.testing [--port N]``: serve the recorded samples until Ctrl-C."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ._samples import PROVIDERS
from ._server import ProviderServer


def main(argv: Sequence[str] | None = None) -> int:
    """Start the server, print each provider's base URL, and serve until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m citekit.testing",
        description="Loopback Magisterium / Maritaca / GPTBots server over recorded samples.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    parser.add_argument("--data-dir", default=None, help="sample directory (sample_data layout)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds between SSE events")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to each reply")
    args = parser.parse_args(argv)
    server = ProviderServer(
        args.data_dir, args.delay, args.latency, port=args.port, host=args.host
    ).start()
    print(f"citekit.testing serving samples from {server.data_dir}")
    for provider in PROVIDERS:
        count = len(server.samples(provider))
        print(f"  {provider:<12} {server.base_url(provider)}   ({count} samples)")
    print("Any non-empty API key works. Press Ctrl-C to stop.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
