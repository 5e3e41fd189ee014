"""LLMClient through real litellm over real HTTP to a scripted local OpenAI-compatible server."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from envpipeline.errors import ConfigError, EnvpipelineError, LLMError, MissingExtraError
from envpipeline.llm import LLMClient, LLMConfig
from tests.llm_server import Reply, ScriptedLLMServer, llm_server_fixture  # noqa: F401 - the fixture

pytestmark = pytest.mark.llm

HELLO = [{"role": "user", "content": "Say hello."}]


def make_client(server: ScriptedLLMServer, **overrides: object) -> LLMClient:
    settings: dict[str, object] = {
        "model": "openai/scripted-model",
        "api_base": server.api_base,
        "timeout_sec": 5.0,
        "num_retries": 0,
        "temperature": 0.0,
    }
    settings.update(overrides)
    return LLMClient(LLMConfig(**settings))


def test_content_round_trip_and_request_shape(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(Reply(content="hello there", prompt_tokens=21, completion_tokens=4))
    response = make_client(llm_server, max_tokens=64).complete(HELLO)
    assert response.content == "hello there"
    assert (response.prompt_tokens, response.completion_tokens) == (21, 4)
    assert response.cached is False
    assert response.cost_usd is None  # an unpriced local model
    assert response.latency_sec > 0
    (request,) = llm_server.requests
    assert request["model"] == "scripted-model"
    assert request["messages"] == HELLO
    assert request["max_tokens"] == 64
    assert request["temperature"] == 0.0


def test_tool_calls_come_back_with_string_arguments(llm_server: ScriptedLLMServer) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": '{"path": "/app"}'}}
    llm_server.push(Reply(content=None, tool_calls=[call]))
    tools = [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}]
    response = make_client(llm_server).complete(HELLO, tools=tools)
    assert response.tool_calls == [call]
    assert json.loads(response.tool_calls[0]["function"]["arguments"]) == {"path": "/app"}
    assert llm_server.requests[0]["tools"] == tools


def test_usage_accumulates_tokens_and_cost(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(
        Reply(content="a", prompt_tokens=100, completion_tokens=10),
        Reply(content="b", prompt_tokens=200, completion_tokens=20),
    )
    client = make_client(llm_server)
    client.complete(HELLO)
    client.complete([{"role": "user", "content": "again"}])
    usage = client.usage()
    assert (usage.calls, usage.cached_calls) == (2, 0)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (300, 30, 330)
    assert usage.cost_usd == 0.0 and usage.unpriced_calls == 2


def test_priced_model_reports_cost(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(Reply(content="priced", prompt_tokens=1000, completion_tokens=1000))
    client = make_client(llm_server, model="openai/gpt-4o-mini")
    response = client.complete(HELLO)
    assert response.cost_usd is not None and response.cost_usd > 0
    assert client.usage().cost_usd == pytest.approx(response.cost_usd)


def test_disk_cache_serves_identical_call_without_http(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.push(
        Reply(content="cached answer", prompt_tokens=9, completion_tokens=3), Reply(content="fresh")
    )
    client = make_client(llm_server, cache_dir=tmp_path / "cache")
    first = client.complete(HELLO)
    second = client.complete(HELLO)
    assert len(llm_server.requests) == 1
    assert (second.content, second.cached, first.cached) == ("cached answer", True, False)
    assert (second.prompt_tokens, second.completion_tokens) == (9, 3)
    # a fresh client (another process) reads the same files
    third = make_client(llm_server, cache_dir=tmp_path / "cache").complete(HELLO)
    assert third.cached and third.content == "cached answer" and len(llm_server.requests) == 1
    usage = client.usage()
    assert (usage.calls, usage.cached_calls, usage.prompt_tokens) == (2, 1, 9)
    # a different parameter is a different key
    assert (
        make_client(llm_server, cache_dir=tmp_path / "cache", temperature=0.5).complete(HELLO).content
        == "fresh"
    )
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == 2
    assert not list((tmp_path / "cache").rglob("*.tmp"))
    assert json.loads(entries[0].read_text())["response"]["content"] in {"cached answer", "fresh"}


def test_retries_after_a_server_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(Reply(status=500, content="overloaded"), Reply(content="second try"))
    response = make_client(llm_server, num_retries=2).complete(HELLO)
    assert response.content == "second try"
    assert len(llm_server.requests) == 2


def test_server_error_without_retries_is_llm_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(Reply(status=500, content="overloaded"), Reply(content="never reached"))
    with pytest.raises(LLMError, match="scripted-model"):
        make_client(llm_server).complete(HELLO)
    assert len(llm_server.requests) == 1


def test_timeout_is_llm_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.push(Reply(content="too late", delay_sec=2.0))
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        make_client(llm_server, timeout_sec=0.3).complete(HELLO)
    assert time.monotonic() - started < 1.9
    assert isinstance(info.value, EnvpipelineError)
    assert "Timeout" in str(info.value)


def test_unreachable_endpoint_is_llm_error() -> None:
    server = ScriptedLLMServer().start()
    api_base = server.api_base
    server.stop()
    client = LLMClient(LLMConfig(model="openai/x", api_base=api_base, timeout_sec=2, num_retries=0))
    with pytest.raises(LLMError, match="failed after 0 retries"):
        client.complete(HELLO)


def test_api_key_from_named_variable_never_cached(
    llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-secret-4f1c9a"
    monkeypatch.setenv("ENVPIPELINE_TEST_LLM_KEY", secret)
    llm_server.push(Reply(content="authorized"))
    config = LLMConfig(
        model="openai/scripted-model",
        api_base=llm_server.api_base,
        api_key_env="ENVPIPELINE_TEST_LLM_KEY",
        num_retries=0,
        cache_dir=tmp_path,
    )
    assert secret not in config.model_dump_json()
    assert LLMClient(config).complete(HELLO).content == "authorized"
    assert llm_server.headers[0]["authorization"] == f"Bearer {secret}"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text()


def test_missing_api_key_variable_is_config_error(llm_server: ScriptedLLMServer, monkeypatch) -> None:
    monkeypatch.delenv("ENVPIPELINE_TEST_LLM_KEY", raising=False)
    client = make_client(llm_server, api_key_env="ENVPIPELINE_TEST_LLM_KEY")
    with pytest.raises(ConfigError, match="ENVPIPELINE_TEST_LLM_KEY"):
        client.complete(HELLO)
    assert llm_server.requests == []


def test_config_is_strict() -> None:
    with pytest.raises(ValueError):
        LLMConfig(model="openai/x", api_key="sk-inline")  # keys are never config values
    with pytest.raises(ValueError):
        LLMConfig(model="openai/x", timeout_sec=0)


def test_resource_shares_one_client_per_config(llm_server: ScriptedLLMServer) -> None:
    from resources.llm import LLMResource

    resource = LLMResource(model="openai/scripted-model", api_base=llm_server.api_base, num_retries=0)
    again = LLMResource(model="openai/scripted-model", api_base=llm_server.api_base, num_retries=0)
    assert resource.client() is again.client()
    llm_server.push("one", "two")
    resource.client().complete(HELLO)
    again.client().complete([{"role": "user", "content": "2"}])
    assert resource.client().usage().calls >= 2


def test_unreachable_endpoint_with_default_retries_is_llm_error() -> None:
    """Retries go through tenacity (the `[llm]` extra): a server that is down is an LLMError, not
    litellm's "tenacity import failed"."""
    server = ScriptedLLMServer().start()
    api_base = server.api_base
    server.stop()
    client = LLMClient(LLMConfig(model="openai/x", api_base=api_base, timeout_sec=2))
    assert client.config.num_retries == 2
    with pytest.raises(LLMError, match="failed after 2 retries"):
        client.complete(HELLO)


def test_without_tenacity_the_client_names_the_llm_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tenacity", None)  # `import tenacity` now raises ImportError
    client = LLMClient(LLMConfig(model="openai/x", api_base="http://127.0.0.1:9/v1"))
    with pytest.raises(MissingExtraError, match=r"needs tenacity.*pip install 'envpipeline\[llm\]'"):
        client.complete(HELLO)
