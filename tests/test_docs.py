"""The README and the user guide (docs/*.md): every relative link and anchor
resolves, no path points outside the repository, and every ``annotator`` line of
their shell blocks is accepted by the real command line.

The walk-through, the rubric and the judge examples also run as written
(tests/test_readme.py, tests/test_rubric_example.py); the other lines (backups,
membership, crowd waves, ...) need a set-up of their own each, so here they are
parsed: the command exists, its options exist, its arguments are complete and
their values convert (a renamed command or option fails this test).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from annotator.cli import main
from tests.documentation import FENCE, ROOT, documents, headings

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`[^`\n]*`")
# Where a checkout lives on someone's machine: such a path in the docs points
# outside the repository (a server's own paths, /etc or /opt in deploy.md, are fine).
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|Users|root|tmp)/")


def _prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code, inline code removed."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, CODE_SPAN.sub("", line)))
    return lines


def slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link: its text
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown file, numbered as GitHub numbers repeats."""
    seen: dict[str, int] = {}
    found = set()
    for _, _, title in headings(path.read_text(encoding="utf-8")):
        base = slug(title)
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def test_slug_follows_github():
    # Anchors the docs link to, as GitHub renders them.
    assert slug("Rater quality: `annotator.analysis.rater_quality`") == (
        "rater-quality-annotatoranalysisrater_quality"
    )
    assert slug("6. Validate: the lead's dashboard and the report") == (
        "6-validate-the-leads-dashboard-and-the-report"
    )
    assert slug("Rubrics (several criteria per item)") == "rubrics-several-criteria-per-item"


def _links() -> list[tuple[Path, int, str]]:
    return [
        (path, number, match.group(1))
        for path in documents()
        for number, line in _prose(path.read_text(encoding="utf-8"))
        for match in LINK.finditer(line)
    ]


def test_the_docs_have_links_to_check():
    # The check below would pass on an empty list; the README alone links to the guide.
    readme = [target for path, _, target in _links() if path.name == "README.md"]
    assert "docs/study-file.md" in readme and "docs/images/dashboard.png" in readme


@pytest.mark.parametrize("path", documents(), ids=lambda path: path.name)
def test_every_relative_link_and_anchor_resolves(path):
    problems = []
    for where, number, target in _links():
        if where != path or re.match(r"(https?|mailto):", target):
            continue
        file, _, anchor = target.partition("#")
        if re.match(r"(/|\\|[A-Za-z]:|file:)", file):
            problems.append(f"line {number}: {target}: an absolute path")
            continue
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.is_relative_to(ROOT):
            problems.append(f"line {number}: {target}: outside the repository")
        elif not resolved.exists():
            problems.append(f"line {number}: {target}: no such file")
        elif anchor and (resolved.suffix != ".md" or anchor not in anchors(resolved)):
            problems.append(f"line {number}: {target}: no heading #{anchor}")
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", documents(), ids=lambda path: path.name)
def test_no_path_outside_the_repository(path):
    text = path.read_text(encoding="utf-8")
    found = [
        f"line {number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if MACHINE_PATH.search(line)
    ]
    assert not found, f"{path.relative_to(ROOT)}:\n" + "\n".join(found)


def _command_lines() -> list[tuple[str, list[str]]]:
    """(where, arguments) of every ``annotator`` line in a shell block."""
    found = []
    for path in documents():
        block = None
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FENCE.match(line):
                block = None if block is not None else line[3:].strip()
                continue
            if block not in ("sh", "text", "bash", "console"):
                continue
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            # The command may follow environment settings (`VAR=value annotator ...`).
            while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
                words = words[1:]
            if words and (words[0] == "annotator" or words[0].endswith("/bin/annotator")):
                if ">" in words:
                    words = words[: words.index(">")]
                found.append((f"{path.relative_to(ROOT)}:{number}", words[1:]))
    return found


def test_the_docs_show_commands():
    where = {place.split(":")[0] for place, _ in _command_lines()}
    assert {"README.md", "docs/judges.md", "docs/security.md", "docs/data-safety.md"} <= where


def test_every_command_in_the_docs_parses(tmp_path, monkeypatch):
    """Each line through click as the shell would run it, the commands' bodies
    replaced by nothing: parsing, prompts and value conversion all happen."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANNOTATOR_INSTANCE_PATH", str(tmp_path / "instance"))
    monkeypatch.setattr(click.Command, "invoke", lambda self, ctx: None)
    failures = []
    for where, args in _command_lines():
        # Files the line names, so that arguments that must exist do.
        for word in args:
            if re.fullmatch(r"[\w./-]+\.(csv|json|jsonl|toml|sqlite|html|png)", word):
                (tmp_path / word).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / word).touch()
        result = CliRunner().invoke(main, args, input="a long passphrase\n" * 2)
        if result.exit_code != 0:
            failures.append(f"{where}: annotator {shlex.join(args)}\n{result.output}")
    assert not failures, "\n".join(failures)
