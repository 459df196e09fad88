"""oh-my-pi's blob references: resolved from the blobs folder beside the session (or omp's default), shown as
images are with type and size (entry pane, Markdown and HTML export); a missing blob is a placeholder, never
an error. Also: omp's roles by name in the entry pane, and strings omp cut shown as cut."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from pitree.ops.export import content_parts, image_placeholder
from pitree.store import blobs
from pitree.store.session_file import EntryReader, load_session_fast
from pitree.widgets.render.entry import entry_parts, fold_text

from tests.omp_files import PNG, blob_image, case16, message
from tests.unit.test_render import plain


@pytest.fixture(autouse=True)
def _no_default_blobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "nowhere"))  # omp's default folder: not the user's
    monkeypatch.setattr(blobs, "_known", [])


def test_case16_image_resolves_from_the_blobs_folder(tmp_path: Path) -> None:
    path, folder = case16(tmp_path)
    tree, _ = load_session_fast(path, final=True, save_cache=False)
    user = EntryReader(path, tree).entry(tree.get("u1"))  # type: ignore[arg-type]
    block = user["message"]["content"][1]
    assert blobs.is_blob_ref(block["data"])
    assert blobs.blob_path(block["data"]) == folder / blobs.blob_hash(block["data"])  # type: ignore[operator]
    assert blobs.blob_base64(block["data"]) == base64.b64encode(PNG).decode()
    shown = plain(entry_parts(user, tree))
    assert f"[image: image/png, {len(PNG)} bytes, blob {blobs.blob_hash(block['data'])[:12]}]" in shown  # type: ignore[index]
    assert image_placeholder(block).startswith(f"[image: image/png, {len(PNG)} bytes")


def test_a_missing_blob_is_a_placeholder(tmp_path: Path) -> None:
    block = blob_image(tmp_path / "blobs", data=b"not written", write=False)
    assert blobs.blob_path(block["data"]) is None and blobs.blob_base64(block["data"]) is None
    assert "missing]" in plain(entry_parts(message("u1", None, {"role": "user", "content": [block]})))
    assert image_placeholder(block).endswith("missing]")
    bad = {"type": "image", "data": "blob:sha256:xyz", "mimeType": "image/png"}
    assert "malformed blob reference" in image_placeholder(bad)
    assert [p.text for p in content_parts([bad])] == ["[image: image/png, malformed blob reference]"]


def test_the_default_omp_blobs_folder_is_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    block = blob_image(agent / "blobs")
    assert blobs.blob_size(block["data"]) == len(PNG)


def test_omp_roles_are_named_and_cut_strings_say_so() -> None:
    msg = {"role": "pythonExecution", "code": "print(1)", "output": "1"}
    shown = plain(entry_parts(message("p1", None, msg)))
    assert "pythonExecution (oh-my-pi)" in shown and "role not known" not in shown and "print(1)" in shown
    cut = "x" * 10 + "\n\n[Session persistence truncated large content]"
    assert "cut by oh-my-pi" in plain(fold_text(cut))
    assert "cut by oh-my-pi" not in plain(fold_text("x" * 10))


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_export_of_an_omp_session(tmp_path: Path, fmt: str) -> None:
    from pitree.ops.export import export_bytes

    path, _ = case16(tmp_path)
    tree, _ = load_session_fast(path, final=True, save_cache=False)
    out = export_bytes(tree, EntryReader(path, tree), None, fmt).decode()
    assert "model → a/x" in out and "model → b/y (smol)" in out
    assert f"[image: image/png, {len(PNG)} bytes, blob " in out
    assert "Fix the parser" in out
    embedded = f'<img src="data:image/png;base64,{base64.b64encode(PNG).decode()}"'
    assert (embedded in out) == (fmt == "html")  # HTML embeds the blob's bytes; Markdown never carries them


def test_html_embeds_only_real_raster_images_within_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitree.ops.export import html as export_html

    good = base64.b64encode(PNG).decode()
    assert export_html.image_src("image/png", good) == f"data:image/png;base64,{good}"
    ref = blob_image(tmp_path / "blobs")["data"]
    blobs.remember_session(tmp_path / "sessions" / "s.jsonl")
    assert export_html.image_src("image/png", ref) == f"data:image/png;base64,{good}"
    svg = base64.b64encode(b"<svg onload='alert(1)'/>").decode()
    for mime, data in [
        ("image/svg+xml", svg),  # a type a browser could run: never
        ("image/png", svg),  # bytes that are not what the type says
        ("image/png", base64.b64encode(b"x" * 64).decode()),
        ("image/png", good[:-4] + '"><x'),  # not base64: nothing of it reaches the attribute
        ("image/png", "blob:sha256:" + "0" * 64),  # a missing blob
        ("image/png", ""),
    ]:
        assert export_html.image_src(mime, data) is None, (mime, data[:20])
    monkeypatch.setattr(export_html, "EMBED_MAX", len(PNG) - 1)
    assert export_html.image_src("image/png", good) is None and export_html.image_src("image/png", ref) is None


@pytest.mark.parametrize("value", [None, True, 1, "", [], ["a"], {}, {"a": [1]}])
def test_omp_entries_with_wrong_types_render(value: object) -> None:
    for msg in (
        {"role": "fileMention", "files": value},
        {"role": "pythonExecution", "code": value, "output": value},
        {"role": value, "content": value},
        {"role": "user", "content": [{"type": "image", "data": value, "mimeType": value}]},
    ):
        assert plain(entry_parts(message("x1", None, msg)))
    assert fold_text(value)
