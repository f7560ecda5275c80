"""``annotator judge``: parse, run, report; the scores reach the exports at once."""

from __future__ import annotations

import csv
import io

from tests.fake_openai import Reply


def _judge(runner, url: str, *options: str, study: str = "small", model: str = "m"):
    """``annotator judge STUDY --model MODEL --base-url URL OPTIONS...``."""
    return runner.invoke(args=["judge", study, "--model", model, "--base-url", url, *options])


def test_judge_stores_scores_the_exports_use(runner, small_study, fake_endpoint, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    endpoint = fake_endpoint()
    options = ["--runs", "2", "--temperature", "0", "--scale", "0-5"]
    result = _judge(runner, endpoint.url, *options, model="local-judge")
    assert result.exit_code == 0, result.output
    assert (
        "local-judge on small at temperature 0: 8 scores: 0 already stored, 8 stored, 0 failed; "
        in result.output
    )
    assert "8 requests, 96 tokens (80 prompt, 16 completion)" in result.output
    assert all(r["temperature"] == 0 for r in endpoint.requests)

    again = _judge(runner, endpoint.url, *options, model="local-judge")
    assert "8 already stored, 0 stored" in again.output and len(endpoint.requests) == 8

    export = "export small --format matrix --scale 0-5 --temperature 0 --out -"
    exported = runner.invoke(args=export.split())
    assert exported.exit_code == 0, exported.output
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert all(row["llm:local-judge"] != "" for row in rows)


def test_the_api_key_comes_from_the_environment(runner, small_study, fake_endpoint, monkeypatch):
    endpoint = fake_endpoint()
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-test-123")
    result = _judge(
        runner, endpoint.url, "--api-key-env", "MY_JUDGE_KEY", "--limit", "1", "--scale", "0-5"
    )
    assert result.exit_code == 0, result.output
    assert endpoint.keys == ["Bearer sk-test-123"]
    assert "sk-test-123" not in result.output


def test_without_a_key_or_an_address_the_command_says_what_to_set(runner, small_study, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = runner.invoke(args=["judge", "small", "--model", "gpt-x"])
    assert result.exit_code != 0
    assert (
        "set OPENAI_API_KEY to the API key (or give --base-url for a local server)" in result.output
    )


def test_failures_are_listed_and_a_refused_key_stops_with_a_message(
    runner, small_study, fake_endpoint
):
    broken = fake_endpoint(lambda request, n: Reply(content="no idea"))
    result = _judge(runner, broken.url, "--limit", "1", "--scale", "0-5", "--attempts", "2")
    assert result.exit_code == 0, result.output
    assert "1 failed" in result.output
    assert "failed: item s1, scale 0-5, run t1-1-" in result.output
    assert "the reply holds no number" in result.output

    refusing = fake_endpoint(lambda request, n: Reply(status=401))
    result = _judge(runner, refusing.url)
    assert result.exit_code != 0
    assert "the server refused the API key" in result.output
    assert "run the command again to resume" in result.output


def test_unknown_study_and_scale(runner, small_study, fake_endpoint):
    endpoint = fake_endpoint()
    result = _judge(runner, endpoint.url, study="nope")
    assert result.exit_code != 0 and "no study with slug 'nope'" in result.output
    result = _judge(runner, endpoint.url, "--scale", "1-7")
    assert result.exit_code != 0 and "unknown scale '1-7'" in result.output
    assert endpoint.requests == []


def test_the_temperature_defaults_to_the_studys(runner, fake_endpoint, tmp_path):
    from tests.conftest import DATA

    study = tmp_path / "study.toml"
    study.write_text(
        (DATA / "small-study.toml").read_text() + "\n[validation]\ntemperature = 0.4\n"
    )
    for args in (["study", "create", study], ["items", "import", "small", DATA / "items.csv"]):
        assert runner.invoke(args=[str(a) for a in args]).exit_code == 0
    endpoint = fake_endpoint()
    result = _judge(runner, endpoint.url, "--limit", "1")
    assert result.exit_code == 0, result.output
    assert "at temperature 0.4" in result.output
    assert {r["temperature"] for r in endpoint.requests} == {0.4}


def test_an_unreachable_server_stops_the_run(runner, small_study):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    result = _judge(runner, f"http://127.0.0.1:{port}/v1", "--max-retries", "0")
    assert result.exit_code != 0
    assert f"cannot reach http://127.0.0.1:{port}/v1" in result.output
