"""Runs every ```sh runnable block of README.md and docs/*.md against a demo daemon
(Tests/Docs/run.sh starts it): each block in bash -e -o pipefail, in document order, with the
demo's exports (WATCHDOG_URL, WATCHDOG_ADMIN_TOKEN, …) and `watchdogd` on PATH (the daemon's
data dir); curl fails on an HTTP error (--fail-with-body), so a changed path or a refused body
fails the block. Placeholders in capitals (REPORT_ID, RELEASE_ID) are replaced by ids the
demo holds. A block is marked by its info string: ```sh runnable.

    python3 Tests/Docs/blocks.py          exit 1 and the failing block's output
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
PRELUDE = """set -e -o pipefail
curl() { command curl --fail-with-body --silent --show-error "$@"; }
"""


def blocks(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    found, current, start = [], None, 0
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if current is None and re.match(r"^```sh\s+runnable\s*$", stripped):
            current, start = [], number
        elif current is not None and stripped == "```":
            found.append((start, "\n".join(current)))
            current = None
        elif current is not None:
            current.append(line)
    return found


def demo(path):
    request = urllib.request.Request(os.environ["WATCHDOG_URL"] + path, headers={"Authorization": "Bearer " + os.environ["WATCHDOG_ADMIN_TOKEN"]})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def placeholders():
    app = "com.example.mail"
    report = demo(f"/v1/apps/{app}/reports?limit=1")["reports"][0]["id"]
    release = next(r["id"] for r in demo(f"/v1/apps/{app}/releases")["releases"] if r["release"] == "14.2.0 (31245)")
    return {"REPORT_ID": report, "RELEASE_ID": release}


def main():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    values = placeholders()
    ran = 0
    for path in files:
        for line, text in blocks(path):
            for name, value in values.items():
                text = re.sub(rf"\b{name}\b", value, text)
            work = pathlib.Path(os.environ["DOCS_WORK"]) / f"block-{ran}"
            work.mkdir(parents=True, exist_ok=True)
            result = subprocess.run(["bash", "-c", PRELUDE + text], cwd=work, capture_output=True, text=True, timeout=120)
            where = f"{path.relative_to(ROOT)}:{line}"
            if result.returncode != 0:
                print(f"FAIL {where} (exit {result.returncode})\n--- block ---\n{text}\n--- stdout ---\n{result.stdout[-2000:]}\n--- stderr ---\n{result.stderr[-2000:]}")
                sys.exit(1)
            print(f"ok   {where}")
            ran += 1
    if ran == 0:
        print("no runnable block found")
        sys.exit(1)
    print(f"docs: {ran} runnable blocks succeeded against the demo daemon")


if __name__ == "__main__":
    main()
