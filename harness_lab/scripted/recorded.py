"""Scenario components from recorded (or live) OpenAI-compatible endpoints, and cassettes."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_lab.scenarios.spec import Scenario

if TYPE_CHECKING:
    import httpx

    from harness_lab.application.components import Components

__all__ = ["cassette_file", "recorded_components", "replaying"]


def cassette_file(sc: Scenario, scenario_path: str) -> Path | None:
    """The scenario's cassette, resolved relative to the scenario file."""
    if sc.cassette is None:
        return None
    path = Path(sc.cassette)
    if not path.is_absolute() and scenario_path not in ("<memory>", "<string>"):
        path = Path(scenario_path).parent / path
    return Path(os.path.normpath(path))  # errors name cassettes/x.yaml, not scenarios/../


def recorded_components(sc: Scenario, scripted_tools: dict[str, Any], http: httpx.Client, *,
                        base_url: str | None = None, tool_url: str | None = None
                        ) -> Components:
    """Components on the OpenAI adapters, calling through ``http`` (the caller closes it);
    tools with a URL are HTTP tools, others scripted."""
    from harness_lab.application.components import Components
    from harness_lab.recorded import (
        HttpJsonTool,
        OpenAICompatibleClient,
        ToolSpec,
        openai_providers,
    )

    spec = sc.recorded
    assert spec is not None
    key = os.environ.get(spec.api_key_env) or None
    client = OpenAICompatibleClient(base_url or spec.base_url, model=spec.model,
                                    api_key=key, http_client=http)
    headers = {"Authorization": f"Bearer {key}"} if key else None
    specs = [ToolSpec(name, t.description, t.parameters) for name, t in spec.tools.items()]
    tools: dict[str, Any] = dict(scripted_tools)
    for name, t in spec.tools.items():
        tools[name] = HttpJsonTool(name, tool_url or t.url, path=t.path, required=tuple(t.required),
                                   evidence=t.evidence, http_client=http, headers=headers)
    from harness_lab.scripted.build import build_retriever

    retriever = build_retriever(sc.retriever.passages, sc.retriever.error,
                                sc.retriever.latency_s)
    return Components(**openai_providers(client, specs), retriever=retriever, tools=tools)


@contextmanager
def replaying(sc: Scenario, scenario_path: str, *, record_mode: str = "none",
              secrets: tuple[str, ...] = ()) -> Iterator[Any]:
    """The scenario's cassette context (strict replay by default), or nothing.

    Raise ValueError for recorded components without a cassette: they would make live calls.
    """
    path = cassette_file(sc, scenario_path)
    if sc.recorded is not None and path is None:
        raise ValueError(f"scenario {sc.name!r}: recorded components need a `cassette:` to "
                         f"replay from; a replay never calls the network")
    if sc.recorded is None or path is None:
        yield None
        return
    from harness_lab.recorded import cassette
    from harness_lab.recorded.cassette import UnplayedInteractionsWarning

    key = os.environ.get(sc.recorded.api_key_env)
    with warnings.catch_warnings():
        if sc.faults:  # a forked run stops early: the rest of the recording is expected unplayed
            warnings.simplefilter("ignore", UnplayedInteractionsWarning)
        with cassette(path, record_mode=record_mode, match_on=tuple(sc.recorded.match_on),
                      secrets=secrets + ((key,) if key else ())) as report:
            yield report
