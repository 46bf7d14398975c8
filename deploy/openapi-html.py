#!/usr/bin/env python3
"""Resources/openapi.yaml as one static HTML page, Resources/dashboard/api.html, which
watchdogd serves at /docs/api: offline (no CDN, no script), under the dashboard's
Content-Security-Policy (its own stylesheet, no inline style), every text of the spec escaped.

    python3 deploy/openapi-html.py           write Resources/dashboard/api.html
    python3 deploy/openapi-html.py --check   exit 1 when the page is not what the spec gives
                                             (Tests/Docs/run.sh, in CI)
Needs PyYAML (python3-yaml).
"""
import html
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
SPEC = ROOT / "Resources/openapi.yaml"
PAGE = ROOT / "Resources/dashboard/api.html"
METHODS = ["get", "post", "put", "patch", "delete"]


def text(value):
    """Spec prose as HTML: escaped, `code` spans kept as <code>, blank lines as paragraphs."""
    paragraphs = re.split(r"\n\s*\n", str(value or "").strip())
    out = []
    for paragraph in paragraphs:
        if not paragraph:
            continue
        escaped = html.escape(" ".join(paragraph.split()))
        out.append("<p>" + re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped) + "</p>")
    return "\n".join(out)


def inline(value):
    escaped = html.escape(" ".join(str(value or "").split()))
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)


def anchor(*parts):
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def resolve(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        *_, kind, name = node["$ref"].split("/")
        node = spec["components"][kind][name]
    return node


def schema_name(schema):
    if not isinstance(schema, dict):
        return ""
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return f'<a href="#schema-{anchor(name)}">{html.escape(name)}</a>'
    kind = schema.get("type", "")
    if kind == "array":
        return "array of " + schema_name(schema.get("items", {}))
    extra = []
    if "enum" in schema:
        extra.append("one of " + ", ".join(f"<code>{html.escape(str(v))}</code>" for v in schema["enum"] if v is not None))
    for key, word in [("minimum", "≥"), ("maximum", "≤"), ("maxLength", "length ≤"), ("default", "default")]:
        if key in schema:
            extra.append(f"{word} {html.escape(str(schema[key]))}")
    if schema.get("nullable"):
        extra.append("or null")
    names = [html.escape(str(kind))] if kind else []
    for key in ("oneOf", "anyOf", "allOf"):
        if key in schema:
            names.append(f" {key} " + " | ".join(schema_name(s) for s in schema[key]))
    return "".join(names) + (f" ({'; '.join(extra)})" if extra else "")


def operation(spec, path, method, op):
    ident = anchor(method, path)
    rows = []
    for parameter in op.get("parameters", []):
        parameter = resolve(spec, parameter)
        required = "yes" if parameter.get("required") else ""
        rows.append(f"<tr><td><code>{html.escape(parameter['name'])}</code></td><td>{html.escape(parameter['in'])}</td><td>{required}</td>"
                    f"<td>{schema_name(parameter.get('schema', {}))}</td><td>{inline(parameter.get('description'))}</td></tr>")
    body = ""
    if "requestBody" in op:
        request = resolve(spec, op["requestBody"])
        kinds = ", ".join(f"<code>{html.escape(t)}</code>: {schema_name(c.get('schema', {}))}" for t, c in request.get("content", {}).items())
        body = f"<p><strong>Body</strong> {kinds}</p>{text(request.get('description'))}"
    responses = []
    for status, response in op.get("responses", {}).items():
        response = resolve(spec, response)
        kinds = ", ".join(f"<code>{html.escape(t)}</code> {schema_name(c.get('schema', {}))}" for t, c in (response.get("content") or {}).items())
        responses.append(f"<tr><td>{html.escape(str(status))}</td><td>{inline(response.get('description'))}</td><td>{kinds}</td></tr>")
    security = "needs a bearer token or dashboard session" if op.get("security") else "no credential"
    parts = [f'<section id="{ident}" aria-labelledby="{ident}-title">',
             f'<h3 id="{ident}-title"><code>{method.upper()} {html.escape(path)}</code></h3>',
             f"<p>{inline(op.get('summary'))} <span class=\"muted\">({security})</span></p>",
             text(op.get("description"))]
    if rows:
        parts.append('<table><caption>Parameters</caption><thead><tr><th scope="col">Name</th><th scope="col">In</th>'
                     '<th scope="col">Required</th><th scope="col">Type</th><th scope="col">What</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>")
    parts.append(body)
    if responses:
        parts.append('<table><caption>Responses</caption><thead><tr><th scope="col">Status</th><th scope="col">What</th>'
                     '<th scope="col">Body</th></tr></thead><tbody>' + "".join(responses) + "</tbody></table>")
    parts.append("</section>")
    return ident, "\n".join(p for p in parts if p)


def schema_section(spec, name, schema):
    ident = "schema-" + anchor(name)
    schema = schema or {}
    rows = []
    required = set(schema.get("required", []))
    for prop, value in (schema.get("properties") or {}).items():
        description = value.get("description") if isinstance(value, dict) else ""
        rows.append(f"<tr><td><code>{html.escape(prop)}</code></td><td>{'yes' if prop in required else ''}</td>"
                    f"<td>{schema_name(value)}</td><td>{inline(description)}</td></tr>")
    table = ('<table><caption>Fields</caption><thead><tr><th scope="col">Field</th><th scope="col">Required</th><th scope="col">Type</th>'
             '<th scope="col">What</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>") if rows else f"<p>{schema_name(schema)}</p>"
    return (f'<section id="{ident}" aria-labelledby="{ident}-title"><h3 id="{ident}-title"><code>{html.escape(name)}</code></h3>'
            f"{text(schema.get('description'))}{table}</section>")


def render(spec):
    info = spec.get("info", {})
    by_tag = {}
    for path, item in spec["paths"].items():
        for method in METHODS:
            if method in item:
                op = item[method]
                by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((path, method, op))
    order = [t["name"] for t in spec.get("tags", [])] + sorted(set(by_tag) - {t["name"] for t in spec.get("tags", [])})
    toc, sections = [], []
    for tag in order:
        if tag not in by_tag:
            continue
        entries = []
        sections.append(f'<h2 id="tag-{anchor(tag)}">{html.escape(tag)}</h2>')
        for path, method, op in by_tag[tag]:
            ident, section = operation(spec, path, method, op)
            entries.append(f'<li><a href="#{ident}"><code>{method.upper()} {html.escape(path)}</code></a></li>')
            sections.append(section)
        toc.append(f'<li><a href="#tag-{anchor(tag)}">{html.escape(tag)}</a><ul>{"".join(entries)}</ul></li>')
    schemas = spec.get("components", {}).get("schemas", {})
    sections.append('<h2 id="schemas">Schemas</h2>')
    sections += [schema_section(spec, name, schema) for name, schema in schemas.items()]
    toc.append('<li><a href="#schemas">Schemas</a></li>')
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(info.get('title', 'API'))} — API reference</title>
<link rel="stylesheet" href="/dashboard/api.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><p><a href="/">Dashboard</a> · <a href="/openapi.yaml">openapi.yaml</a></p></header>
<nav aria-label="Endpoints"><ul>{"".join(toc)}</ul></nav>
<main id="main">
<h1>{html.escape(info.get('title', 'API'))} {html.escape(str(info.get('version', '')))} — API reference</h1>
{text(info.get('description'))}
<p class="muted">Written from <a href="/openapi.yaml">openapi.yaml</a> by deploy/openapi-html.py; docs/api.md says what each endpoint means.</p>
{chr(10).join(sections)}
</main>
</body>
</html>
"""


if __name__ == "__main__":
    page = render(yaml.safe_load(SPEC.read_text(encoding="utf-8")))
    if sys.argv[1:] == ["--check"]:
        if PAGE.read_text(encoding="utf-8") != page:
            print(f"{PAGE.relative_to(ROOT)} is not what {SPEC.relative_to(ROOT)} gives: run python3 deploy/openapi-html.py")
            sys.exit(1)
        print(f"api.html: up to date with openapi.yaml ({page.count('<section')} sections)")
    else:
        PAGE.write_text(page, encoding="utf-8")
        print(f"wrote {PAGE.relative_to(ROOT)} ({len(page)} bytes)")
