"""Point 9 of issue 16: every canvas chart has a text alternative — it is an image named after
what it shows, with a table of the very numbers it draws under it."""
import re

import pytest
from playwright.sync_api import expect

NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?")


def numbers(text):
    return [float(n.replace(",", "")) for n in NUMBER.findall(text)]


@pytest.mark.parametrize("view,charts", [("compare", 3), ("timeline", 2)])
def test_every_chart_has_a_table_of_its_numbers(admin, view, charts):
    page = admin.open(view)
    page.wait_for_load_state("networkidle")
    canvases = page.locator("#main canvas")
    expect(canvases.first).to_be_visible()
    assert canvases.count() == charts
    for canvas in canvases.all():
        holder = canvas.locator("xpath=..")
        expect(holder).to_have_attribute("role", "img")
        expect(holder).to_have_attribute("aria-label", re.compile("table"))
        drawn = holder.evaluate("h => ({ labels: h.chart.data.labels, datasets: h.chart.data.datasets.map((d) => d.data) })")
        card = canvas.locator("xpath=ancestor::div[contains(@class, 'card')][1]")
        for summary in card.locator("details:not([open]) > summary").all():
            summary.click()  # the table view, opened as a user would
        rows = card.locator("table tbody tr")
        expect(rows.first).to_be_visible()
        firsts = [cell.strip() for cell in rows.locator("td:first-child").all_inner_texts()]
        assert drawn["labels"], "the chart draws nothing"
        for index, label in enumerate(drawn["labels"]):
            shown = label.rstrip("…")  # the axis may shorten a label; the table has it in full
            found = [i for i, text in enumerate(firsts) if text.startswith(shown)]
            assert found, f"no row for {label!r} in {firsts}"
            cells = " ".join(rows.nth(found[0]).locator("td:not(:first-child)").all_inner_texts())
            for values in drawn["datasets"]:
                value = values[index]
                if value is None:
                    continue
                assert any(abs(n - value) <= 0.051 for n in numbers(cells)), f"{label}: {value} not in {cells!r}"
