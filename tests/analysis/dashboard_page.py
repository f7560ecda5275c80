"""Reading the dashboard off the lead's study page."""

from __future__ import annotations

from lxml import html as lxml_html


def scale_cards(page: str) -> dict[str, lxml_html.HtmlElement]:
    tree = lxml_html.fromstring(page)
    return {
        card.xpath("./h3")[0].text.removeprefix("Scale "): card
        for card in tree.xpath("//section[@id='dashboard']/article")
    }


def cell_text(element) -> str:
    return " ".join(element.text_content().split())
