"""The ``record`` subcommand: record a scenario's cassette against an endpoint."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import yaml

__all__ = ["reference_server", "register"]


def reference_server(path: str | Path) -> Any:
    """A ReferenceServer playing the scripted conversation in YAML file ``path``.

    The file holds ``completions`` (each ``json: {...}``, ``text: ...`` or
    ``tool_call: {name, arguments}`` with optional ``content`` and ``usage: [in, out]``),
    optional ``tools`` (URL path -> JSON body) and optional ``api_key``.
    """
    from harness_lab.recorded import (
        ReferenceServer,
        completion,
        json_completion,
        tool_call_completion,
    )

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    script = []
    for item in data["completions"]:
        usage = tuple(item.get("usage", (0, 0)))
        if "json" in item:
            script.append(json_completion(item["json"], usage=usage))
        elif "text" in item:
            script.append(completion(item["text"], usage=usage))
        else:
            call = item["tool_call"]
            script.append(tool_call_completion(call["name"], call.get("arguments", {}),
                                               call_id=call.get("id"),
                                               content=item.get("content"), usage=usage))
    return ReferenceServer(script, tools=data.get("tools", {}),
                           api_key=data.get("api_key", "reference-key"))


def _cmd_record(args: argparse.Namespace) -> int:
    from harness_lab.scenarios import ScenarioError, ScenarioRun, load_file
    from harness_lab.scenarios.recorded import cassette_file

    try:
        [loaded] = load_file(args.scenario)[:1]
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return 2
    sc = loaded.scenario
    if sc.recorded is None or sc.cassette is None:
        print(f"{args.scenario}: a recorded scenario needs `recorded:` and `cassette:`",
              file=sys.stderr)
        return 2
    recorded = sc.recorded
    if args.api_key_env:
        recorded = recorded.model_copy(update={"api_key_env": args.api_key_env})
        sc = sc.model_copy(update={"recorded": sc.recorded.model_copy(
            update={"api_key_env": args.api_key_env})})
        loaded = type(loaded)(sc, loaded.path, loaded.fault_lines)
    server = reference_server(args.reference) if args.reference else None
    base_url, tool_url = args.base_url, None
    if server is not None:
        server.start()
        base_url, tool_url = server.base_url, server.root_url
        os.environ.setdefault(recorded.api_key_env, server.api_key)
    try:
        result = ScenarioRun(loaded, record_mode=args.mode, base_url=base_url,
                             tool_url=tool_url).run()
    finally:
        if server is not None:
            server.stop()
    print(f"recorded {cassette_file(sc, loaded.path)}: {result.row()}")
    return 0 if result.error is None else 1


def register(sub: Any) -> None:
    """Add ``harness-lab record``."""
    p = sub.add_parser("record", help="record a scenario's cassette against an endpoint")
    p.add_argument("scenario")
    p.add_argument("--base-url", help="the OpenAI-compatible endpoint (default: the file's)")
    p.add_argument("--api-key-env", help="the environment variable holding the API key")
    p.add_argument("--mode", default="all", choices=("once", "new_episodes", "all"),
                   help="vcrpy record mode (default: all, a fresh recording)")
    p.add_argument("--reference", help="play this scripted conversation on a local "
                                       "reference server instead of a real endpoint")
    p.set_defaults(func=_cmd_record)
