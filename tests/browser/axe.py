"""axe-core in a Playwright page: ``assert_no_serious_violations(page)``.

axe-core (vendored, see vendor/README.md) is injected into the page as it is
and run on the whole document with its default rules (WCAG 2.0-2.2 A and AA
and best practices) plus ``target-size`` (WCAG 2.2 AA 2.5.8, off by default
in axe-core 4.14). Violations of impact "serious" or "critical" fail the
check; the message lists each rule's id, help text and offending nodes.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["AXE_PATH", "FAILING_IMPACTS", "assert_no_serious_violations", "axe_violations"]

AXE_PATH = Path(__file__).resolve().parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
FAILING_IMPACTS = frozenset({"serious", "critical"})


def axe_violations(page) -> list[dict]:
    """Every violation axe-core finds in the page as it is now."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Evaluated, not added as a <script>: the app's Content-Security-Policy
        # refuses inline scripts, and evaluate goes through the DevTools protocol.
        page.evaluate(AXE_PATH.read_text("utf-8") + "\n;undefined")
    return page.evaluate(
        """async () => {
            const results = await axe.run(document, {
                resultTypes: ['violations'], rules: {'target-size': {enabled: true}},
            });
            return results.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
                nodes: v.nodes.map(n => ({
                    target: n.target.join(' '), html: n.html,
                    summary: n.failureSummary,
                })),
            }));
        }"""
    )


def _describe(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"- {v['id']} ({v['impact']}): {v['help']} <{v['helpUrl']}>")
        for node in v["nodes"]:
            lines.append(f"    {node['target']}: {node['html'][:200]}")
            if node["summary"]:
                lines.append("      " + node["summary"].replace("\n", "\n      "))
    return "\n".join(lines)


def assert_no_serious_violations(page, where: str = "") -> list[dict]:
    """Fail on axe-core violations of impact serious or critical.

    Returns the minor and moderate ones, for a caller that wants to report them.
    """
    violations = axe_violations(page)
    failing = [v for v in violations if v["impact"] in FAILING_IMPACTS]
    if failing:
        width = page.viewport_size["width"] if page.viewport_size else "?"
        label = where or page.url
        raise AssertionError(
            f"axe-core: {len(failing)} serious or critical violation(s) on {label} "
            f"at {width} px:\n{_describe(failing)}"
        )
    return [v for v in violations if v["impact"] not in FAILING_IMPACTS]
