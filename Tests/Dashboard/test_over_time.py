"""Issue 44, point 4: Over time plots the share of sessions with a glitch by default — the
measure Compare's verdicts are on — with reports per 1,000 sessions as a choice, marks the
partial day, and says when day 0 is kept."""
import re
import urllib.parse

from playwright.sync_api import expect

from conftest import APP, api

BASE, TARGET = "14.1.0 (31102)", "14.2.0 (31245)"


def overlay():
    query = urllib.parse.urlencode({"base": BASE, "target": TARGET, "bucket": "day"})
    lines = api("GET", f"/v1/apps/{APP}/overlay?{query}")[0]["releases"]
    return {line["role"]: line for line in lines}


def cells(page, column):
    """The overlay table's cells of the column headed `column`, day by day."""
    table = page.locator('[data-role="overlay-table"]')
    headers = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    index = headers.index(column)
    return [c.strip() for c in table.locator(f"tbody tr td:nth-child({index + 1})").all_inner_texts()]


def test_over_time_plots_the_share_of_sessions_with_a_glitch_by_default(admin):
    page = admin.open("timeline")
    expect(page.locator('[data-role="overlay-heading"]')).to_have_text("Share of sessions with keyboard glitches, by days since each release’s sessions took off")
    expect(page.locator("select[name=measure]")).to_have_value("share")
    expect(page.locator('[data-role="overlay-table"]')).to_be_visible()
    lines = overlay()
    for role in ("base", "target"):
        assert lines[role]["affected_sessions_without_hour"] == 0, "the demo's releases are dated whole"
        shown = cells(page, f"{role.capitalize()} % of sessions with a glitch")
        expected = []
        for share, sessions, partial in zip(lines[role]["shares"], lines[role]["sessions"], lines[role]["partial"]):
            text = "—" if sessions is None else "no sessions" if share is None else f"{share * 100:.1f} %"
            expected.append(text + ("partial" if partial else ""))
        assert [c.replace("\n", "") for c in shown] == expected, role
    # The base's affected sessions per day (the first "affected" column), beside its sessions.
    assert cells(page, "affected") == ["—" if a is None else f"{a:,}" for a in lines["base"]["affected_sessions"]]
    # The chart draws the same shares, in percent, on an axis that says so.
    chart = page.locator('[data-role="overlay"]').locator("xpath=preceding-sibling::div[contains(@class, 'chart')][1]")
    drawn = chart.evaluate("h => ({ axis: h.chart.options.scales.y.title.text, data: h.chart.data.datasets.map((d) => d.data) })")
    assert drawn["axis"] == "% of sessions with a glitch"
    target_shares = [None if s is None else s * 100 for s in lines["target"]["shares"]]
    assert all((a is None and b is None) or abs(a - b) < 1e-9 for a, b in zip(drawn["data"][1], target_shares))
    # The day still filling is marked, in the table and on the chart's points.
    partial = lines["target"]["partial"].index(True)
    expect(page.locator('[data-role="overlay-table"] tbody tr').nth(partial).locator(".badge.partial")).to_have_text("partial")
    # Day 0 of both demo releases is kept (each has far more than 50 sessions).
    expect(page.locator('[data-role="day0-kept-base"]')).to_have_text(", kept")
    expect(page.locator('[data-role="day0-kept-target"]')).to_have_text(", kept")
    assert lines["base"]["aligned_start_kept"] and lines["target"]["aligned_start_kept"]
    expect(page.locator('[data-role="measure-note"]')).to_be_hidden()
    assert not admin.uncaught


def test_reports_per_thousand_sessions_is_a_choice_kept_in_the_address(admin):
    page = admin.open("timeline")
    expect(page.locator('[data-role="overlay-table"]')).to_be_visible()
    page.select_option("select[name=measure]", "rate")
    expect(page).to_have_url(re.compile(r"measure=rate"))
    expect(page.locator('[data-role="overlay-heading"]')).to_have_text("Reports per 1,000 sessions of keyboard glitches, by days since each release’s sessions took off")
    lines = overlay()
    shown = [c.replace("\n", "") for c in cells(page, "Target / 1k sessions")]
    expected = []
    for rate, sessions, partial in zip(lines["target"]["rates"], lines["target"]["sessions"], lines["target"]["partial"]):
        text = "—" if sessions is None else "no sessions" if rate is None else f"{rate:,.1f}"
        expected.append(text + ("partial" if partial else ""))
    assert shown == expected
    # The kind chart follows the measure.
    expect(page.locator('[data-role="kind-heading"]')).to_contain_text("reports per 1,000 sessions of keyboard glitches, by kind")
    page.reload()
    page.wait_for_selector("#main h1")
    expect(page.locator("select[name=measure]")).to_have_value("rate")
    assert not admin.uncaught
