"""Where a live run's providers come from: a scenario file's scripted fakes, or HTTP.

A :class:`RunSource` makes, for each run, the :class:`~harness_lab.application.parts.RunParts`
it is submitted with: components, configuration, a fresh invocation ledger and the latency
model. Scripted fakes keep state per run (a script's position, what they were asked), so each
run gets fresh ones; the HTTP adapters' one ``httpx`` client is shared, as it is thread-safe
and pools connections.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from harness_lab.application.components import Components
from harness_lab.application.parts import RunParts
from harness_lab.bounded_json import parse_json
from harness_lab.config import HarnessConfig
from harness_lab.scenarios.spec import Scenario
from harness_lab.tools.ledger import InvocationLedger

__all__ = ["HttpRetriever", "HttpSource", "RunSource", "ScenarioSource", "SourceError",
           "http_terms"]


class SourceError(ValueError):
    """A scenario file or provider option that cannot serve runs; the message names it."""


class RunSource(Protocol):
    """Makes the parts of each live run."""

    def parts(self) -> RunParts:
        """Fresh parts for one run."""
        ...

    def describe(self) -> str:
        """One line saying where the providers are, for the server's start-up banner."""
        ...


class ScenarioSource:
    """The scenario's scripted fakes, fresh for each run; its latencies become real sleeps.

    The scenario's ``faults`` are not played: a live run's faults are the real ones (a
    client that goes away, a user who cancels, a provider that fails).
    """

    def __init__(self, scenario: Scenario, label: str) -> None:
        from harness_lab.scripted.build import ScenarioLatency, build_config

        self.scenario = scenario
        self.label = label
        self.config = build_config(scenario.config)
        self.latency = ScenarioLatency.from_spec(scenario.latency)

    def parts(self) -> RunParts:
        """The scenario's fakes, built afresh."""
        from harness_lab.runner.run import build_components
        from harness_lab.scripted.build import build_tools

        sc = self.scenario
        return RunParts(build_components(sc, build_tools(sc.tools)), self.config,
                        InvocationLedger(), self.latency)

    def describe(self) -> str:
        """Where the providers are."""
        return f"scripted providers of {self.label}"


class HttpRetriever:
    """A Retriever that POSTs ``{"query": ...}`` to ``url`` and reads ``{"passages": [...]}``.

    An HTTP error, a timeout, a transport error or an answer without a list of text
    ``passages`` is a :class:`~harness_lab.errors.ProviderError`.
    """

    def __init__(self, url: str, http: Any, *, timeout_s: float = 30.0) -> None:
        self.url = url
        self.http = http
        self.timeout_s = timeout_s

    def retrieve(self, request: Any) -> Any:
        """The passages the endpoint returns for the request's query."""
        import httpx

        from harness_lab.errors import ProviderError
        from harness_lab.messages import RetrievalReply

        try:
            response = self.http.post(self.url, json={"query": request.query},
                                      timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise ProviderError(f"retriever {self.url}: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            raise ProviderError(f"retriever {self.url}: HTTP {response.status_code}")
        try:
            passages = parse_json(response.text, source=self.url).get("passages")
        except (ValueError, AttributeError):  # not JSON, past the bounded reader, not an object
            passages = None
        if not isinstance(passages, list) or not all(isinstance(p, str) for p in passages):
            raise ProviderError(f"retriever {self.url}: the answer has no list of text passages")
        return RetrievalReply(tuple(passages))


class HttpSource:
    """The OpenAI-compatible adapters on ``provider_url`` and HTTP JSON tools on ``tool_url``.

    The tools are the scenario's (by name), each POSTed to ``{tool_url}/tools/{name}``, or its
    ``recorded:`` tools where it declares them; the configuration is the scenario's (or the
    defaults without one). The knowledge retriever is POSTed at ``{tool_url}/retriever``. A
    call takes the time it really takes, so there is no latency model.
    """

    def __init__(self, provider_url: str, *, tool_url: str | None = None,
                 scenario: Scenario | None = None, model: str = "gpt-4o-mini",
                 timeout_s: float = 30.0) -> None:
        from harness_lab.recorded.client import OpenAICompatibleClient, http_client
        from harness_lab.scripted.build import build_config

        if not provider_url.startswith(("http://", "https://")):
            raise SourceError(f"--provider-url {provider_url!r}: not an http(s) URL")
        self.provider_url = provider_url
        self.tool_url = (tool_url or _origin(provider_url)).rstrip("/")
        self.scenario = scenario
        self.http = http_client()
        self.client = OpenAICompatibleClient(provider_url, model=model, timeout_s=timeout_s,
                                             http_client=self.http)
        self.config = build_config(scenario.config) if scenario is not None else HarnessConfig()

    def parts(self) -> RunParts:
        """Fresh adapters (the diagnosis model keeps a run's conversation) on the shared client."""
        from harness_lab.recorded import HttpJsonTool, ToolSpec, openai_providers

        sc = self.scenario
        specs: list[ToolSpec] = []
        tools: dict[str, Any] = {}
        if sc is not None and sc.recorded is not None and sc.recorded.tools:
            for name, rec in sc.recorded.tools.items():
                specs.append(ToolSpec(name, rec.description, rec.parameters))
                tools[name] = HttpJsonTool(name, self.tool_url, path=rec.path,
                                           required=tuple(rec.required), evidence=rec.evidence,
                                           http_client=self.http)
        elif sc is not None:
            for name, spec in sc.tools.items():
                specs.append(ToolSpec(name, f"the read-only tool {name}"))
                tools[name] = HttpJsonTool(name, self.tool_url, path=f"/tools/{name}",
                                           required=tuple(spec.required),
                                           evidence=spec.evidence, read_only=spec.read_only,
                                           http_client=self.http)
        retriever = HttpRetriever(f"{self.tool_url}/retriever", self.http)
        components = Components(**openai_providers(self.client, specs), retriever=retriever,
                                tools=tools)
        return RunParts(components, self.config, InvocationLedger())

    def describe(self) -> str:
        """Where the providers are."""
        return f"providers at {self.provider_url}, tools at {self.tool_url}"

    def close(self) -> None:
        """Close the HTTP client every part it gave calls through, and its connections."""
        self.http.close()


def http_terms(scenario: Scenario) -> str:
    """Everything an :class:`HttpSource` takes from ``scenario``, as canonical JSON: its
    configuration, each tool's required arguments and evidence and read-only flags, and the
    recorded tools' definitions. Two scenarios with the same terms are served alike; what
    their scripted providers answer lives at the provider URL, not here."""
    recorded = scenario.recorded.tools if scenario.recorded is not None else {}
    return json.dumps({
        "config": scenario.config.model_dump(mode="json"),
        "tools": {name: {"required": list(t.required), "evidence": t.evidence,
                         "read_only": t.read_only} for name, t in scenario.tools.items()},
        "recorded_tools": {name: r.model_dump(mode="json") for name, r in recorded.items()},
    }, sort_keys=True)


def _origin(url: str) -> str:
    """``scheme://host:port`` of ``url``: where tools live unless told otherwise."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
