"""What exporting a run as an OpenTelemetry trace costs, step by step; prints figures.

    python benchmarks/bench_otel_export.py              # the scenario library's runs, 6 times over

Over the records of the scenario library's runs (earlier turns included) repeated
``--times`` times, each figure the best of ``--repeat`` passes: the span tree alone
(``plan_run``), the ids' seed (``run_seed``), the whole export into the SDK's
``InMemorySpanExporter``, the same to an OTLP/HTTP receiver in this process (it answers 200
and counts requests and bytes), and the OTLP JSON file (``write_otlp_json``).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

from bench_otel_sweep import Receiver  # sibling modules: this directory is on the path
from timing import best

from harness_lab.otel import export_records, plan_run, write_otlp_json
from harness_lab.otel.ids import run_seed
from harness_lab.record import RunRecord
from harness_lab.runner.run import run_paths

ROOT = Path(__file__).resolve().parents[1]


def library_records() -> list[tuple[str, RunRecord]]:
    """(scenario, record) of every run the library makes."""
    return [(r.scenario, rec) for r in run_paths([str(ROOT / "scenarios")])
            for rec in (*r.turns, r.record) if rec is not None]


def main() -> None:
    """Time each step and print one line each, per run and per span."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--times", type=int, default=6)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    pairs = library_records() * args.times
    records = [rec for _, rec in pairs]
    names = [name for name, _ in pairs]
    runs = len(records)
    spans = sum(1 + _descendants(plan_run(r)) for r in records)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    with tempfile.TemporaryDirectory() as tmp:
        steps = {
            "span tree (plan_run)": lambda: [plan_run(r) for r in records],
            "ids' seed (run_seed)": lambda: [run_seed(r, 0, n) for n, r in pairs],
            "export to InMemorySpanExporter": lambda: export_records(
                records, exporter=InMemorySpanExporter(), scenarios=names),
            "export over OTLP/HTTP": lambda: export_records(records, endpoint=url,
                                                            scenarios=names),
            "OTLP JSON file (write_otlp_json)": lambda: write_otlp_json(
                records, Path(tmp) / "runs.otlp.jsonl", scenarios=names),
        }
        print(f"{runs:,} runs ({runs // args.times:,} of the library x {args.times}), "
              f"{spans / runs:.1f} spans a run, best of {args.repeat}")
        for label, work in steps.items():
            before = Receiver.received
            seconds = best(args.repeat, work)
            sent = (Receiver.received - before) / args.repeat
            extra = f", {sent / 2**20:.1f} MiB a pass" if sent else ""
            print(f"  {label:<34} {1e3 * seconds / runs:7.3f} ms a run "
                  f"{1e6 * seconds / spans:7.1f} µs a span{extra}")
    server.shutdown()


def _descendants(span: object) -> int:
    children = getattr(span, "children", ())
    return sum(1 + _descendants(c) for c in children)


if __name__ == "__main__":
    main()
