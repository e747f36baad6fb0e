"""The docs site builds offline with ``mkdocs build --strict``, and every public name is in it.

The build runs as CI runs it, with every proxy variable pointing at a closed port on the
loopback address: a plugin, theme or docstring inventory that fetched anything would fail the
build. ``--strict`` turns every warning into a failure: a broken link or anchor, a page missing
from the navigation, a missing image, a docstring griffe cannot read. The built pages must then
load nothing from another host (no web fonts, scripts or styles from a CDN), so the site reads
offline as the rest of citekit does. The pages' code blocks run in ``tests/project/test_pages.py``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citekit
from tests.budget import examples

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: An address nothing listens on: every request through a proxy fails at once.
NO_NETWORK = "http://127.0.0.1:9"
#: A script, style sheet, font, image or frame a page loads from another host.
FOREIGN = re.compile(
    r"""<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href|srcset)=["']?(?:https?:)?//"""
    r"""|@import\s+url\(["']?(?:https?:)?//|fonts\.(?:googleapis|gstatic)\.com""",
    re.IGNORECASE,
)


def foreign_loads(html: str) -> list[str]:
    return FOREIGN.findall(html)


def load_extension() -> object:
    spec = importlib.util.spec_from_file_location("doctest_blocks", DOCS / "doctest_blocks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "PYTHONPATH": str(ROOT),
        **{
            name: NO_NETWORK
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")
        },
        "NO_PROXY": "",
        "no_proxy": "",
    }
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    log = f"{done.stdout}\n{done.stderr}"
    assert done.returncode == 0, log[-6000:]
    assert "WARNING" not in log, log[-6000:]
    return out


@pytest.mark.slow
def test_the_site_builds_strictly_and_offline(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    names = {page.relative_to(site).as_posix() for page in pages}
    for source in DOCS.rglob("*.md"):
        built = source.relative_to(DOCS).with_suffix(".html").as_posix()
        assert built in names, f"{source.name} was not built"
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not foreign_loads(text), f"{page.relative_to(site)} loads from another host"


@pytest.mark.slow
def test_docstring_examples_are_code_in_the_reference(site: Path) -> None:
    reference = (site / "reference.html").read_text(encoding="utf-8")
    assert 'id="citekit.Answer"' in reference
    assert "<blockquote" not in reference, "a doctest line was read as a quote"
    # A doctest prompt highlighted as a prompt, inside a code block.
    assert '<span class="gp">&gt;&gt;&gt; </span>' in reference


@pytest.mark.slow
def test_the_images_are_in_the_site(site: Path) -> None:
    for image in (DOCS / "img").glob("*.png"):
        assert (site / "img" / image.name).read_bytes() == image.read_bytes()
    assert not list(site.rglob("*.py")), "the docs' scripts are not pages of the site"


def test_every_public_name_is_in_the_reference() -> None:
    targets = {
        line.removeprefix("::: ").strip()
        for page in DOCS.rglob("*.md")
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith("::: ")
    }
    missing = []
    for name in citekit.__all__:
        if name == "__version__":
            continue
        value = getattr(citekit, name)
        kind = value if isinstance(value, type) or callable(value) else type(value)
        where = f"{getattr(kind, '__module__', '')}.{getattr(kind, '__qualname__', name)}"
        if f"citekit.{name}" not in targets and where not in targets:
            missing.append(name)
    assert not missing, f"add `::: citekit.NAME` for these to docs/reference.md: {missing}"


def test_the_readme_links_resolve() -> None:
    """The README is read on GitHub as plain Markdown: its links to the docs must lead there."""
    from markdown_it import MarkdownIt

    readme = ROOT / "README.md"
    targets = []
    for token in MarkdownIt("commonmark").parse(readme.read_text(encoding="utf-8")):
        for child in token.children or ():
            target = child.attrGet("href") or child.attrGet("src")
            if isinstance(target, str):
                targets.append(target)
    local = [t for t in targets if "://" not in t and not t.startswith("#")]
    assert any(t.startswith("docs/img/") for t in local), "the README shows a screenshot"
    broken = [t for t in local if not (ROOT / t.partition("#")[0]).exists()]
    assert not broken, f"README.md links to missing files: {broken}"


def test_every_image_is_small_and_shown() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in DOCS.rglob("*.md"))
    text += (ROOT / "README.md").read_text(encoding="utf-8")
    images = sorted((DOCS / "img").glob("*.png"))
    assert images
    for image in images:
        assert image.stat().st_size < 200_000, f"{image.name}: run docs/screenshots.py"
        assert f"img/{image.name}" in text, f"{image.name} is shown on no page"


def test_a_load_from_another_host_is_seen() -> None:
    assert foreign_loads('<link rel="stylesheet" href="https://fonts.googleapis.com/css?f=Roboto">')
    assert foreign_loads("<script src='//cdn.example.org/vega.js'></script>")
    assert foreign_loads("<style>@import url(https://example.org/a.css)</style>")
    assert not foreign_loads('<script src="assets/javascripts/bundle.min.js"></script>')
    assert not foreign_loads('<a href="https://www.magisterium.com">Magisterium AI</a>')


@pytest.mark.parametrize(
    ("text", "fenced"),
    [
        ("Text.\n\n>>> 1 + 1\n2\n\nMore.", "Text.\n\n```pycon\n>>> 1 + 1\n2\n```\n\nMore."),
        (
            "    >>> x = 1\n    >>> x\n    1",
            "    ```pycon\n    >>> x = 1\n    >>> x\n    1\n    ```",
        ),
        ("```python\n>>> kept\n```", "```python\n>>> kept\n```"),
        ("No examples.", "No examples."),
    ],
)
def test_doctest_lines_are_fenced(text: str, fenced: str) -> None:
    assert load_extension().fence_examples(text) == fenced  # type: ignore[attr-defined]


LINES = st.lists(
    st.sampled_from(
        ["", "text", "    indented", ">>> 1 + 1", "    >>> x", "2", "```", "```python", "    ```"]
    ),
    max_size=30,
)


def is_fence(line: str) -> bool:
    return line.lstrip().startswith("```")


@settings(max_examples=examples(300))
@given(LINES)
def test_fencing_keeps_every_line_and_puts_each_example_in_code(lines: list[str]) -> None:
    text = "\n".join(lines)
    fenced = load_extension().fence_examples(text).split("\n")  # type: ignore[attr-defined]
    # Nothing but fences is added, and every line given is kept, in order.
    assert [line for line in fenced if not is_fence(line)] == [
        line for line in text.split("\n") if not is_fence(line)
    ]
    added = sum(line.strip() == "```pycon" for line in fenced)
    assert sum(map(is_fence, fenced)) == sum(map(is_fence, lines)) + 2 * added
    # Read as Markdown reads fences, every doctest line is code, never a quote.
    inside = False
    for line in fenced:
        if is_fence(line):
            inside = not inside
        elif line.lstrip().startswith(">>> "):
            assert inside, fenced
