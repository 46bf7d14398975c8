"""Issue 24: Compare says which interval its verdicts read — the always-valid (sequential) one by
default, the fixed one on request — and shows that interval's figures, as the API computes them."""
import re

from playwright.sync_api import expect

from conftest import APP, api


def interval_in_sentence(page):
    sentence = page.locator("#main .sentence").inner_text()
    match = re.search(r"([0-9.]+)× fewer sessions with keyboard glitches, (always-valid )?95 % interval ([0-9.]+)–([0-9.]+)", sentence)
    assert match, sentence
    return bool(match.group(2)), float(match.group(3)), float(match.group(4))


def expected(method):
    releases = api("GET", f"/v1/apps/{APP}/releases")[0]["releases"]
    ids = {r["release"].split(" ")[0]: r["id"] for r in releases}
    data = api("GET", f"/v1/apps/{APP}/compare?base={ids['14.1.0']}&target={ids['14.2.0']}&interval={method}")[0]
    interval = data["overall"]["interval"]
    # The sentence says "N× fewer, a–b": a and b are 1/upper and 1/lower.
    return 1 / interval["upper"], 1 / interval["lower"]


def test_compare_reads_the_always_valid_interval_by_default_and_the_fixed_one_on_request(admin):
    page = admin.open("compare")
    note = page.locator('#main [data-role="interval-method"]')
    expect(note).to_contain_text("always-valid 95 % interval")
    named, low, high = interval_in_sentence(page)
    want = expected("sequential")
    assert named and abs(low - want[0]) < 0.06 and abs(high - want[1]) < 0.06, (low, high, want)

    picker = page.locator("select[name=interval]")
    picker.select_option("fixed")
    picker.press("Enter")
    expect(note).to_contain_text("fixed-sample 95 % interval")
    named, low_fixed, high_fixed = interval_in_sentence(page)
    want = expected("fixed")
    assert not named and abs(low_fixed - want[0]) < 0.06 and abs(high_fixed - want[1]) < 0.06, (low_fixed, high_fixed, want)
    # One look's interval is narrower than the one valid at every look.
    assert low < low_fixed and high > high_fixed


def test_config_effect_reads_the_always_valid_interval_and_says_so(admin):
    api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": [{"name": "half auto-fix", "match": {"percent": 50}, "set": {"auto_fix": True}}]})
    try:
        page = admin.open("cohort")
        note = page.locator('#main [data-role="interval-method"]')
        expect(note).to_contain_text("always-valid 95 % interval")
        expect(page.locator("#main #cohort .sentence")).to_contain_text("always-valid 95 % interval")
        picker = page.locator("select[name=interval]")
        picker.select_option("fixed")
        picker.press("Enter")
        expect(note).to_contain_text("fixed-sample 95 % interval")
        expect(page.locator("#main #cohort .sentence")).not_to_contain_text("always-valid")
    finally:
        api("PATCH", f"/v1/admin/apps/{APP}/config", {"rules": []})
