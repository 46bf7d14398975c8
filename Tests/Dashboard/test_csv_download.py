"""Issue 42, point 4: the releases and issues views offer their table as CSV, downloaded with
the dashboard's session (a click in Chromium, the file read back with Python's csv module)."""
import csv
import io

import pytest

FORMULA = ("=", "+", "-", "@", "\t", "\r")


@pytest.mark.parametrize("view,first_column", [("releases", "id"), ("issues", "release")])
def test_download_csv_gives_the_views_table_as_rfc4180_text(viewer, view, first_column):
    page = viewer.open(view)
    link = page.locator('#main a[data-role="csv"]')
    link.wait_for()
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename.endswith(f"-{view}.csv"), download.suggested_filename
    raw = open(download.path(), "rb").read()
    assert raw.endswith(b"\r\n") and b"\r\n" in raw
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    assert rows[0][0] == first_column, rows[0]
    assert len(rows) > 1 and all(len(row) == len(rows[0]) for row in rows)
    # No text cell a spreadsheet would run (numbers the server computed may be negative).
    for row in rows[1:]:
        for cell in row:
            if cell and cell[0] in FORMULA:
                float(cell)
