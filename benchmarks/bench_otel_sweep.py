"""What OpenTelemetry export costs the canonical sweep, off and on; prints figures.

    python benchmarks/bench_otel_sweep.py                 # 20,000 runs, best of 3 each way
    python benchmarks/bench_otel_sweep.py --baseline DIR  # and a checkout from before the export

Each figure is the best wall clock of ``--repeat`` runs of the command a user times,
``harness-lab sweep benchmarks/canonical.yaml --samples N --workers 1 --seed 1 --quiet``, the
variants alternated so that the machine's drift falls on each alike:

- **off**: the command as it is;
- **kept**: ``--keep-every K`` alone, what keeping runs costs without sending them;
- **on**: ``--keep-every K --otlp URL``, every kept run sent to an OTLP/HTTP receiver in this
  process (it answers 200 to each request and counts the bytes);
- **baseline** (with ``--baseline DIR``): the same command run from another checkout of the
  project, e.g. the commit before the export existed (``git worktree add DIR REV``), imported
  through ``PYTHONPATH`` on the pure-Python core, as **off** is then too.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CANONICAL = "benchmarks/canonical.yaml"


class Receiver(BaseHTTPRequestHandler):
    """Takes every OTLP/HTTP request and answers 200."""

    received = 0

    def do_POST(self) -> None:  # noqa: N802 - the handler's name is http.server's
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).received += len(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's
        """Quiet."""


def _sweep(extra: list[str], samples: int, checkout: Path, pure: bool) -> float:
    """Seconds of wall clock for one sweep from ``checkout``."""
    env = dict(os.environ)
    if pure:
        env["HARNESS_LAB_PURE"] = "1"
        env["PYTHONPATH"] = str(checkout)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-W", "ignore", "-m", "harness_lab", "sweep", CANONICAL,
                    "--samples", str(samples), "--workers", "1", "--seed", "1", "--quiet",
                    *extra], cwd=checkout, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    """Run each variant ``--repeat`` times, alternated, and print the best of each."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=20_000)
    p.add_argument("--keep-every", type=int, default=100)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--baseline", type=Path, help="another checkout, run on the pure core")
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    pure = args.baseline is not None
    variants: dict[str, tuple[list[str], Path]] = {
        "off": ([], ROOT),
        "kept": (["--keep-every", str(args.keep_every)], ROOT),
        "on": (["--keep-every", str(args.keep_every), "--otlp", url], ROOT),
    }
    if args.baseline is not None:
        variants["baseline"] = ([], args.baseline.resolve())
    best = {name: float("inf") for name in variants}
    for _ in range(args.repeat):
        for name, (extra, checkout) in variants.items():
            best[name] = min(best[name], _sweep(extra, args.samples, checkout, pure))
    server.shutdown()
    core = "pure-Python" if pure else "default (compiled when built)"
    print(f"{args.samples:,} canonical runs on 1 core, {core} core, best of {args.repeat}, "
          f"kept: every {args.keep_every}th run ({args.samples // args.keep_every:,} traces)")
    off = best["off"]
    for name, seconds in best.items():
        print(f"  {name:<9} {seconds:6.2f} s  {args.samples / seconds:8,.0f} runs/s  "
              f"{100 * (seconds / off - 1):+6.1f} % against off")
    print(f"  the receiver took {Receiver.received / 2**20:.1f} MiB of OTLP over "
          f"{args.repeat} 'on' sweep(s)")


if __name__ == "__main__":
    main()
