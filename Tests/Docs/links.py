"""Every relative link of README.md and docs/*.md resolves: the file exists, and an anchor
(#section) is a heading of that file as GitHub names it (lower case, punctuation dropped,
spaces to hyphens, -1, -2 … for repeats). External links are not fetched (no network here).

    python3 Tests/Docs/links.py            exit 1 and a line per broken link
"""
import pathlib
import re
import sys
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def prose(text):
    """The file without its fenced code blocks and inline code (links there are not links)."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"`[^`]*`", "", line))
    return out


def slug(heading):
    heading = re.sub(r"<[^>]+>", "", heading)                # inline HTML
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    heading = heading.replace("`", "").strip().lower()
    heading = re.sub(r"[^\w\- ]", "", heading, flags=re.UNICODE)
    return heading.replace(" ", "-")


def anchors(path):
    seen, names = {}, set()
    for line in prose(path.read_text(encoding="utf-8")):
        match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        names.add(base if count == 0 else f"{base}-{count}")
    # Explicit anchors: <a id="…"> / <a name="…">.
    names |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", path.read_text(encoding="utf-8")))
    return names


def check(files):
    broken = []
    cache = {}
    for path in files:
        for number, line in enumerate(prose(path.read_text(encoding="utf-8")), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                destination = path if not file_part else (path.parent / urllib.parse.unquote(file_part)).resolve()
                where = f"{path.relative_to(ROOT)}:{number}: {target}"
                if not destination.exists():
                    broken.append(f"{where} — no such file")
                    continue
                if anchor and destination.suffix == ".md":
                    if destination not in cache:
                        cache[destination] = anchors(destination)
                    if urllib.parse.unquote(anchor) not in cache[destination]:
                        broken.append(f"{where} — no heading #{anchor} in {destination.relative_to(ROOT)}")
    return broken


if __name__ == "__main__":
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = check(files)
    for line in broken:
        print(line)
    links = sum(len(LINK.findall(l)) for f in files for l in prose(f.read_text(encoding="utf-8")))
    print(f"links: {links} links in {len(files)} files, {len(broken)} broken")
    sys.exit(1 if broken else 0)
