"""The README's "Running a study" commands run as written on a fresh instance,
and so do the guide's judge commands (docs/judges.md).

The commands are read from the documentation itself (the first ``sh`` block under
the section's heading, wherever it lives), so the test and the text cannot drift
apart. Each
runs in a folder holding a copy of ``examples/`` (the README names files
relative to the repository), against a new instance folder and database;
``serve`` is the only one left out. A password prompt gets the password typed
in, as a person would.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from flask.cli import ScriptInfo

from annotator.cli import main
from tests.documentation import command_lines, first_block, section
from tests.helpers import annotator_args

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "a long passphrase"


def readme_commands(title: str = "Running a study") -> list[str]:
    """The lines of the first ``sh`` block under the heading ``title``."""
    return command_lines(first_block(section(title), "sh"))


def test_running_a_study_as_the_readme_says(fresh_instance):
    folder, load = fresh_instance
    lines = readme_commands()
    assert any(annotator_args(line)[0][0] == "serve" for line in lines)
    outputs: dict[str, str] = {}
    for line in lines:
        args, redirect = annotator_args(line)
        if args[0] == "serve":
            continue
        result = CliRunner().invoke(
            main, args, obj=ScriptInfo(create_app=load), input=f"{PASSWORD}\n{PASSWORD}\n"
        )
        assert result.exit_code == 0, f"{line}\n{result.output}"
        if redirect:
            (folder / redirect).write_text(result.stdout, encoding="utf-8")
        outputs[" ".join(args[:2])] = result.output

    assert "Lead you@example.org created." in outputs["lead create"]
    invites = (folder / "invites.txt").read_text().splitlines()
    assert len(invites) == 12 and all("/invite/" in link for link in invites)
    assert "ICC(A,1)" in outputs["icc matrix-0-5.csv"]
    matrix = (folder / "matrix-0-5.csv").read_text().splitlines()
    assert len(matrix) == 1 + 30  # the 30 example items; the attention checks stay out
    assert json.loads((folder / "alttest-0-5.json").read_text())["llm"]
    alt_test = next(text for command, text in outputs.items() if command.startswith("alt-test"))
    assert "Model judge-a:" in alt_test and "winning rate" in alt_test


def test_running_llm_judges_as_the_readme_says(fresh_instance, fake_endpoint):
    """The judge example, against a fake endpoint in place of the local server."""
    folder, load = fresh_instance
    endpoint = fake_endpoint()
    setup = [
        ["init"],
        ["study", "create", "examples/grading-scales.toml"],
        ["items", "import", "grading-scales", "examples/items.jsonl"],
    ]
    lines = readme_commands("Running LLM judges")
    assert "--base-url http://127.0.0.1:8000/v1" in lines[0]
    commands = setup + [
        annotator_args(line.replace("http://127.0.0.1:8000/v1", endpoint.url))[0] for line in lines
    ]
    outputs = []
    for args in commands:
        result = CliRunner().invoke(main, args, obj=ScriptInfo(create_app=load))
        assert result.exit_code == 0, f"{args}\n{result.output}"
        outputs.append(result.output)
    # 30 items (the attention checks are not judged) x 3 runs on one scale.
    assert "90 scores: 0 already stored, 90 stored, 0 failed" in outputs[3]
    assert len(endpoint.requests) == 90
    header = (folder / "matrix-0-5.csv").read_text().splitlines()[0]
    assert "llm:Qwen/Qwen2.5-7B-Instruct" in header
