"""A single self-contained HTML page for an export `Document`.

Every string from the session goes through `make_safe` and `html.escape` where it is written; the page has
no script at all, one inline stylesheet allowed by its hash in a strict Content-Security-Policy (nothing
else may load: no fonts, frames, forms or external resources; images only as checked `data:` URIs), and folds are
`<details>`.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Iterator

from pitree.ops.export.doc import Document, Part, Section
from pitree.session.text import make_safe
from pitree.store.blobs import blob_base64, blob_size, is_blob_ref

CSS = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #656d76; --line: #d0d7de;
  --code: #f6f8fa; --user: #ddf4ff; --assistant: #ffffff; --note: #fff8c5; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8d96a0; --line: #30363d;
  --code: #161b22; --user: #0c2d6b; --assistant: #0d1117; --note: #3b2e00; } }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); max-width: 60rem;
  margin: 2rem auto; padding: 0 1rem; }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; font-size: .9rem; }
header dt { color: var(--muted); } header dd { margin: 0; overflow-wrap: anywhere; }
section.entry { border: 1px solid var(--line); border-radius: 6px; margin: .8rem 0; padding: .5rem .8rem; }
section.user { background: var(--user); } section.assistant { background: var(--assistant); }
section.compaction, section.branchSummary { border-style: dashed; }
section.compact { border: none; padding: 0 .8rem; margin: .3rem 0; color: var(--muted); font-size: .9rem; }
.head { font-size: .85rem; color: var(--muted); } .head .role { font-weight: 600; color: var(--fg); }
.head .label { background: var(--note); border-radius: 3px; padding: 0 .3rem; }
.head code { font-size: .8rem; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .4rem 0; }
.note { font-style: italic; color: var(--muted); margin: .3rem 0; overflow-wrap: anywhere; }
pre { background: var(--code); padding: .5rem; border-radius: 4px; overflow-x: auto; white-space: pre-wrap;
  overflow-wrap: anywhere; font-size: .85rem; margin: .3rem 0; }
figure { margin: .4rem 0; } figure img { max-width: 100%; height: auto; }
details { margin: .3rem 0; } summary { cursor: pointer; font-family: ui-monospace, monospace; font-size: .85rem;
  overflow-wrap: anywhere; }
"""

EMBED_MAX = 8 * 1024 * 1024  # decoded bytes of one embedded image; a bigger one stays a placeholder
_IMAGE_MAGIC = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff",
    "image/gif": b"GIF8",
    "image/webp": b"RIFF",
}
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")

_CSS_HASH = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
CSP = (
    f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; img-src data:; script-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)


def image_src(mime: str, data: str) -> str | None:
    """A `data:` URI for an image the export may embed: a known raster type whose bytes start as that type says
    (never SVG or anything else a browser could run or fetch from), valid base64, at most EMBED_MAX bytes; an
    oh-my-pi blob reference is read from its blobs folder. None: show the placeholder only."""
    magic = _IMAGE_MAGIC.get(mime)
    if magic is None:
        return None
    if is_blob_ref(data):
        size = blob_size(data)
        if size is None or size > EMBED_MAX:
            return None
        data = blob_base64(data) or ""
    if not data or len(data) * 3 // 4 - data[-2:].count("=") > EMBED_MAX or not _BASE64.fullmatch(data):
        return None
    try:
        head = base64.b64decode(data[:24])
    except ValueError:
        return None
    if not head.startswith(magic) or (mime == "image/webp" and head[8:12] != b"WEBP"):
        return None
    return f"data:{mime};base64,{data}"


def esc(text: str, keep_newlines: bool = True) -> str:
    """Session text as HTML text: control characters made visible, then escaped (quotes too)."""
    return html.escape(make_safe(text, keep_newlines), quote=True)


def one_line(text: str) -> str:
    return esc(" ".join(make_safe(text, keep_newlines=False).split()))


def render_part(part: Part) -> str:
    if part.kind in ("prose", "markdown"):  # shown as the text it is (pre-wrap), Markdown included
        return f'<div class="text">{esc(part.text)}</div>'
    if part.kind == "code":
        lang = f' data-lang="{esc(part.lang)}"' if part.lang else ""
        return f"<pre{lang}>{esc(part.text)}</pre>"
    if part.kind == "note":
        return f'<p class="note">{esc(part.text)}</p>'
    if part.kind == "image":
        src = image_src(part.lang, part.src)
        caption = f'<p class="note">{esc(part.text)}</p>'
        return f'<figure><img src="{src}" alt="{esc(part.text)}">{caption}</figure>' if src else caption
    body = "".join(render_part(p) for p in part.parts)
    return f"<details><summary>{one_line(part.text)}</summary>{body}</details>"


def render_section(section: Section) -> str:
    classes = f"entry {section.kind}" + (" compact" if section.compact else "")
    head = [f'<span class="role">{one_line(section.title)}</span>']
    if section.time:
        head.append(f"<time>{one_line(section.time)}</time>")
    if section.model:
        head.append(f'<span class="model">{one_line(section.model)}</span>')
    if section.label:
        head.append(f'<span class="label">{one_line(section.label)}</span>')
    head.append(f"<code>{one_line(section.entry_id)}</code>")
    body = "".join(render_part(p) for p in section.parts)
    return f'<section class="{classes}"><div class="head">{" · ".join(head)}</div>{body}</section>'


def html_chunks(doc: Document) -> Iterator[str]:
    """The page a section at a time (the sections are made as they are read: see build.py)."""
    meta = "".join(f"<dt>{one_line(k)}</dt><dd>{one_line(v)}</dd>" for k, v in doc.meta)
    yield (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{one_line(doc.title)}</title>\n"
        f"<style>{CSS}</style>\n</head>\n<body>\n"
        f"<header><h1>{one_line(doc.title)}</h1><dl>{meta}</dl></header>\n"
        "<main>\n"
    )
    between = ""
    for section in doc.sections:
        yield between + render_section(section)
        between = "\n"
    yield "\n</main>\n</body>\n</html>\n"


def render_html(doc: Document) -> str:
    return "".join(html_chunks(doc))
