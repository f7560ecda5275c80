"""Render benchmarks/results.json as the table of docs/performance.md.

Run with ``.venv/bin/python benchmarks/table.py`` (``make bench`` runs it after the
benchmarks). The table goes between the two markers of docs/performance.md, each
figure beside its goal with met or **not met**, the commit it was measured at, and the
machine's load average when the script started and when the figure was taken (this
machine has 2 cores: above 2, processes were waiting for one, and a wall time there
says more about the others' work than about the code). ``--check`` only says whether
the page's table is the one the results give (exit 1 if not).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.results import RESULTS, ROOT, load_results

PAGE = ROOT / "docs" / "performance.md"
START = "<!-- benchmark table: start (benchmarks/table.py writes it from results.json) -->"
END = "<!-- benchmark table: end -->"
CORES = 2


def _figure(value: float, unit: str) -> str:
    text = f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{text}x" if unit == "x" else f"{text} {unit}"


def _verdict(row: dict) -> str:
    if row["goal_met"] is None:
        return "no goal"
    return "met" if row["goal_met"] else "**not met**"


def _taken(row: dict) -> str:
    start, end = row["machine_load"]
    load = f"load {start:g}-{end:g}" if start != end else f"load {start:g}"
    if max(start, end) > CORES:
        load += " (loaded)"
    return f"{row['taken_at'][:10]}, `{row['commit']}`, {load}"


def render(rows: list[dict]) -> str:
    """The Markdown table of the rows (quick runs left out), by benchmark."""
    lines = [
        "| benchmark | measure | figure | goal | met? | taken | command |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in sorted(
        (r for r in rows if not r.get("quick")), key=lambda r: (r["benchmark"], r["measure"])
    ):
        goal = row["goal"] or "-"
        if row["goal"] and row["unit"] == "x":
            goal += "x"
        elif row["goal"]:
            goal += f" {row['unit']}"
        lines.append(
            f"| {row['benchmark']} | {row['measure'].replace('|', '/')} | "
            f"{_figure(row['value'], row['unit'])} | {goal} | {_verdict(row)} | "
            f"{_taken(row)} | `{row['command']}` |"
        )
    return "\n".join(lines)


def write(page: Path, table: str) -> str:
    text = page.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{page}: the markers {START!r} and {END!r} are missing")
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    return f"{before}{START}\n{table}\n{END}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    new = write(args.page, render(load_results(args.results)))
    if args.check:
        same = new == args.page.read_text()
        verdict = "up to date" if same else "differs from; run benchmarks/table.py to write"
        print(f"{args.page}: {verdict} {args.results}")
        return 0 if same else 1
    args.page.write_text(new)
    print(f"{args.page}: table written from {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
