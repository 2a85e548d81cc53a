"""The ``record`` subcommand: record a scenario's cassette against an endpoint (its exit codes
are listed under ``harness-lab record --help``)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness_lab.cli.common import EXIT_FAILED, EXIT_USAGE, add_command, fail, usage_problem
from harness_lab.terminal.console import printable

__all__ = ["ReferenceScriptError", "reference_server", "register"]

class ReferenceScriptError(ValueError):
    """A ``--reference`` file that is not a scripted conversation; names the file."""


def _script_item(path: Path, i: int, item: Any) -> Any:
    from harness_lab.scripted import completion, json_completion, tool_call_completion

    where = f"{path}: completions[{i}]"
    if not isinstance(item, Mapping):
        raise ReferenceScriptError(f"{where}: must be a mapping with `json`, `text` or "
                                   "`tool_call`")
    usage = item.get("usage", (0, 0))
    if (not isinstance(usage, list | tuple) or len(usage) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                       for n in usage)):
        raise ReferenceScriptError(f"{where}.usage: must be [prompt_tokens, "
                                   "completion_tokens], two counts")
    pair = (int(usage[0]), int(usage[1]))
    if "json" in item:
        if not isinstance(item["json"], Mapping):
            raise ReferenceScriptError(f"{where}.json: must be a mapping")
        return json_completion(item["json"], usage=pair)
    if "text" in item:
        return completion(str(item["text"]), usage=pair)
    call = item.get("tool_call")
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
        raise ReferenceScriptError(f"{where}: needs `json`, `text` or `tool_call: "
                                   "{name, arguments}`")
    arguments = call.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise ReferenceScriptError(f"{where}.tool_call.arguments: must be a mapping")
    return tool_call_completion(call["name"], arguments, call_id=call.get("id"),
                                content=item.get("content"), usage=pair)


def reference_server(path: str | Path) -> Any:
    """A ReferenceServer playing the scripted conversation in YAML file ``path``.

    The file holds ``completions`` (each ``json: {...}``, ``text: ...`` or
    ``tool_call: {name, arguments}`` with optional ``content`` and ``usage: [in, out]``),
    optional ``tools`` (URL path -> JSON body) and optional ``api_key``. Raise
    :class:`ReferenceScriptError` naming the file for anything else.
    """
    from harness_lab.scenarios.safe_yaml import YamlInputError, load_yaml
    from harness_lab.scripted import ReferenceServer

    file = Path(path)
    try:
        _, data = load_yaml(file, "a scripted conversation")
    except YamlInputError as exc:
        raise ReferenceScriptError(str(exc)) from None
    if not isinstance(data, Mapping) or not isinstance(data.get("completions"), list):
        raise ReferenceScriptError(f"{file}: needs a `completions` list")
    script = [_script_item(file, i, item) for i, item in enumerate(data["completions"])]
    tools = data.get("tools", {})
    if not isinstance(tools, Mapping) or not all(
            isinstance(k, str) and k.startswith("/") and isinstance(v, Mapping)
            for k, v in tools.items()):
        raise ReferenceScriptError(f"{file}: tools: must map URL paths (`/tools/logs`) to "
                                   "JSON bodies")
    api_key = data.get("api_key", "reference-key")
    if not isinstance(api_key, str) or not api_key:
        raise ReferenceScriptError(f"{file}: api_key: must be a non-empty string")
    return ReferenceServer(script, tools=dict(tools), api_key=api_key)


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _count(n: int) -> str:
    return f"{n} interaction" + ("" if n == 1 else "s")


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KiB"


def _cmd_record(args: argparse.Namespace) -> int:
    from harness_lab.recorded.cassette_file import CassetteError
    from harness_lab.recorded.recording import record_scenario
    from harness_lab.scenarios import ScenarioError, load_file

    if usage_problem("record", [args.scenario], None):
        return EXIT_USAGE
    try:
        loaded = load_file(args.scenario)[0]
    except ScenarioError as exc:
        print(printable(str(exc)), file=sys.stderr)
        return EXIT_USAGE
    except IndexError:
        print(f"{args.scenario}: holds no scenario", file=sys.stderr)
        return EXIT_USAGE
    sc = loaded.scenario
    if args.api_key_env and sc.recorded is not None:
        sc = sc.model_copy(update={"recorded": sc.recorded.model_copy(
            update={"api_key_env": args.api_key_env})})
        loaded = dataclasses.replace(loaded, scenario=sc)
    try:
        server = reference_server(args.reference) if args.reference else None
    except ReferenceScriptError as exc:
        return fail("record", f"--reference {exc}")
    base_url, tool_url = args.base_url, None
    key_env = sc.recorded.api_key_env if sc.recorded is not None else "OPENAI_API_KEY"
    user_key = os.environ.get(key_env)
    if server is not None:
        server.start()
        base_url, tool_url = server.base_url, server.root_url
        os.environ[key_env] = server.api_key  # the scripted server's key, never the user's
    try:
        outcome = record_scenario(loaded, record_mode=args.mode, base_url=base_url,
                                  tool_url=tool_url)
    except (CassetteError, ValueError) as exc:
        return fail("record", str(exc))
    finally:
        if server is not None:
            server.stop()
            if user_key is None:
                os.environ.pop(key_env, None)
            else:
                os.environ[key_env] = user_key
    if not outcome.ok:
        kept = "was left as it was" if outcome.path.exists() else "was not written"
        print(f"not recorded: {_shown(outcome.path)} {kept}", file=sys.stderr)
        for problem in outcome.problems:
            print(printable(f"  {problem}"), file=sys.stderr)
        print(f"  (scenario {sc.name}, record mode {outcome.record_mode})", file=sys.stderr)
        return EXIT_FAILED  # the recording was refused
    if outcome.written:
        print(f"recorded {_count(outcome.recorded)} into {_shown(outcome.path)} "
              f"({outcome.interactions} in all, {_size(outcome.size)})")
    else:
        print(f"nothing new to record: {_shown(outcome.path)} holds "
              f"{_count(outcome.interactions)} ({_size(outcome.size)})\n{outcome.played} "
              f"replayed (record mode {outcome.record_mode}; --mode all records it again)")
    print(f"scenario {sc.name}: ok")
    return 0


def register(sub: Any) -> None:
    """Add ``harness-lab record``."""
    p = add_command(
        sub, "record", func=_cmd_record,
        description="Record a recorded scenario's cassette against an OpenAI-compatible "
                    "endpoint.\nThe cassette is replaced only by a sound recording: every "
                    "request answered,\nno HTTP error, the scenario's expectations held.",
        epilog="exit codes:\n  0  recorded (or nothing new to record)\n"
               "  1  recording refused: a request got no answer or an HTTP error, or the "
               "run\n     did not do what the scenario expects (the cassette is left as it "
               "was)\n  2  usage error (a malformed scenario, cassette or --reference file)")
    p.add_argument("scenario", help="the scenario file (with `recorded:` and `cassette:`)")
    p.add_argument("--base-url", metavar="URL",
                   help="the OpenAI-compatible endpoint (default: the file's recorded.base_url)")
    p.add_argument("--api-key-env", metavar="NAME",
                   help="the environment variable holding the API key (default: the file's "
                        "recorded.api_key_env)")
    p.add_argument("--mode", default="once", choices=("once", "new_episodes", "all", "none"),
                   help="record mode: once records a missing cassette and replays an "
                        "existing one, new_episodes adds requests the cassette lacks, all "
                        "records everything again, none only replays")
    p.add_argument("--reference", metavar="FILE",
                   help="play this scripted conversation on a local reference server "
                        "instead of a real endpoint")
