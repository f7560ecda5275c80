"""What every study report must be (issue 34), checked on the page: no figure without
data, no note said twice, headers in words, no "best" in a one-row table, weak
numbers greyed and never best. Shared by the report tests and the shape matrix."""

from __future__ import annotations

from lxml import html as lxml_html


def report_problems(page: str) -> list[str]:
    """What is wrong with the report ``page`` (empty: nothing)."""
    tree = lxml_html.fromstring(page)
    problems = []
    for figure in tree.xpath("//figure"):
        alt = figure.xpath(".//img")[0].get("alt") or ""
        # A figure's alt text starts "No ..." when its data are empty (figures.py).
        if alt.startswith("No ") or not figure.xpath(".//img/@src"):
            problems.append(f"figure {figure.get('id')} has no data: {alt}")
    reasons = tree.xpath("//ul[@class='not-computed']/li/@data-reason")
    for reason in sorted({r for r in reasons if reasons.count(r) > 1}):
        problems.append(f"reason said more than once: {reason}")
    for table in tree.xpath("//table[@data-table]"):
        key = table.get("data-table")
        for th in table.xpath("./thead/tr/th"):
            name, shown = th.get("data-column"), th.text_content().strip()
            if "_" in shown or (shown == name and "_" in name):
                problems.append(f"table {key}: header {shown!r} is a code name")
        rows = table.xpath("./tbody/tr")
        if len(rows) == 1 and table.xpath("./tbody/tr/td[contains(@class, 'best')]"):
            problems.append(f"table {key}: one row, yet a cell is marked best")
        for td in table.xpath(".//td[contains(@class, 'weak')]"):
            if "best" in td.get("class").split():
                problems.append(f"table {key}: a weak cell is marked best")
        if not rows:
            problems.append(f"table {key} is drawn without a row")
    return problems
