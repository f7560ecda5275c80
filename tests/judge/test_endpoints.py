"""The instance's JUDGE_ENDPOINTS: read, checked with messages naming the entry, keys from the environment."""

from __future__ import annotations

import pytest

from annotator import create_app
from annotator.judge.endpoints import JudgeEndpoint, endpoint_api_key, judge_endpoints


def test_endpoints_are_read_in_order():
    config = {
        "JUDGE_ENDPOINTS": {
            "local vllm": {"base_url": "http://127.0.0.1:8000/v1"},
            "openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"},
        }
    }
    assert list(judge_endpoints(config).values()) == [
        JudgeEndpoint("local vllm", "http://127.0.0.1:8000/v1", None),
        JudgeEndpoint("openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    ]


@pytest.mark.parametrize("config", [{}, {"JUDGE_ENDPOINTS": None}, {"JUDGE_ENDPOINTS": {}}])
def test_no_endpoints(config):
    assert judge_endpoints(config) == {}


@pytest.mark.parametrize(
    ("listed", "message"),
    [
        (["http://x/v1"], "JUDGE_ENDPOINTS: expected a mapping of names"),
        ({"a": "http://x/v1"}, "JUDGE_ENDPOINTS['a']: expected {\"base_url\""),
        ({"": {"base_url": "http://x/v1"}}, "JUDGE_ENDPOINTS['']: a name is 1-64"),
        ({"a": {"base_url": "http://x/v1", "key": "k"}}, "['a']: unknown key key"),
        ({"a": {}}, "JUDGE_ENDPOINTS['a'].base_url: expected an http(s) address"),
        ({"a": {"base_url": "file:///etc/passwd"}}, "['a'].base_url: expected an http(s)"),
        ({"a": {"base_url": "http:///v1"}}, "['a'].base_url: expected an http(s)"),
        (
            {"a": {"base_url": "http://x/v1", "api_key_env": "sk-123"}},
            "['a'].api_key_env: the NAME of an environment variable",
        ),
    ],
)
def test_malformed_endpoints_are_named(listed, message):
    with pytest.raises(ValueError) as caught:
        judge_endpoints({"JUDGE_ENDPOINTS": listed})
    assert message in str(caught.value)


def test_the_app_does_not_start_with_malformed_endpoints(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path))
    with pytest.raises(ValueError, match=r"JUDGE_ENDPOINTS\['a'\].base_url"):
        create_app({"SECRET_KEY": "x", "JUDGE_ENDPOINTS": {"a": {"base_url": "ftp://x"}}})


def test_endpoints_from_the_environment_as_json(tmp_path, monkeypatch):
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("ANNOTATOR_SECRET_KEY", "x")
    monkeypatch.setenv(
        "ANNOTATOR_JUDGE_ENDPOINTS", '{"local": {"base_url": "http://127.0.0.1:8000/v1"}}'
    )
    app = create_app()
    assert judge_endpoints(app.config) == {
        "local": JudgeEndpoint("local", "http://127.0.0.1:8000/v1")
    }


def test_the_key_comes_from_the_environment_when_asked(monkeypatch):
    endpoint = JudgeEndpoint("hosted", "https://api.example.org/v1", "EXAMPLE_JUDGE_KEY")
    monkeypatch.delenv("EXAMPLE_JUDGE_KEY", raising=False)
    with pytest.raises(ValueError) as caught:
        endpoint_api_key(endpoint)
    assert "environment variable EXAMPLE_JUDGE_KEY, which is not set" in str(caught.value)
    monkeypatch.setenv("EXAMPLE_JUDGE_KEY", "sk-secret")
    assert endpoint_api_key(endpoint) == "sk-secret"
    assert endpoint_api_key(JudgeEndpoint("local", "http://127.0.0.1:8000/v1")) is None
