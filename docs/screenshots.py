"""Make the screenshots of the docs from the real pages, light and dark: ``docs/img/*.png``.

Run it from the checkout after a change to what they show, look at the PNGs, and commit them:

    .venv/bin/python docs/screenshots.py

It is not run in CI (the PNGs are committed; the pages themselves are tested in
``tests/browser/``). Everything is offline: ``citekit demo`` writes the demo page from the
recorded samples, and a recorded answer is asked through ``ck.offline()``'s loopback server and
written as a page by ``ck.export_answer``. Debian's Chromium (``/usr/bin/chromium``), driven by
playwright, shows each page with the light and the dark colour scheme and takes the picture.
With ``pngquant`` on the PATH (Debian's package), each PNG is reduced to a 256-colour palette;
every picture must stay under ``LIMIT`` bytes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
IMG = HERE / "img"
CHROMIUM = "/usr/bin/chromium"
LIMIT = 200_000
#: The answer shown in the docs: a recorded Magisterium answer with numbered sources.
QUESTION = "What does Catholic social teaching say about the dignity of human work?"
SCHEMES = ("light", "dark")


def write_pages(where: Path) -> dict[str, Path]:
    """The demo page and one answer's page, written offline into ``where``."""
    env = {**os.environ, "CITEKIT_HOME": str(where / "home"), "PYTHONPATH": str(ROOT)}
    demo = where / "demo.html"
    subprocess.run(
        [sys.executable, "-m", "citekit", "demo", "--out", str(demo)],
        check=True,
        env=env,
        cwd=where,
        stdout=subprocess.DEVNULL,
    )
    answer = where / "answer.html"
    script = (
        "import sys, citekit as ck\n"
        "with ck.offline():\n"
        "    ans = ck.Magisterium().ask(sys.argv[1])\n"
        "assert ans.sample_question is None, ans.sample_question\n"
        "ck.export_answer(ans, sys.argv[2])\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, QUESTION, str(answer)], check=True, env=env, cwd=where
    )
    return {"demo": demo, "answer": answer}


def shoot(pages: dict[str, Path]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    made = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for scheme in SCHEMES:
                page = browser.new_page(viewport={"width": 960, "height": 720}, color_scheme=scheme)
                # The demo page as it opens: what citekit does, then the first answers.
                page.goto(pages["demo"].as_uri())
                page.wait_for_load_state("networkidle")
                made.append(IMG / f"demo-{scheme}.png")
                page.screenshot(path=made[-1])
                # One answer with its numbered sources, as a notebook shows it.
                page.set_viewport_size({"width": 960, "height": 760})
                page.goto(pages["answer"].as_uri())
                # An exported answer is a plain page: in the dark it takes the browser's own
                # dark colours, as a notebook's dark theme gives the answer its own.
                page.add_style_tag(content=":root{color-scheme: light dark}")
                made.append(IMG / f"answer-{scheme}.png")
                # From the answer's top (the page's own title above it repeats the question)
                # to its first sources.
                top = page.locator(".citekit-answer").bounding_box()
                assert top is not None
                clip = {"x": 0, "y": max(0, top["y"] - 24), "width": 960, "height": 980}
                page.screenshot(path=made[-1], full_page=True, clip=clip)
                page.close()
        finally:
            browser.close()
    return made


def shrink(path: Path) -> None:
    """Reduce ``path`` to a palette PNG with pngquant, when it is installed."""
    pngquant = shutil.which("pngquant")
    if pngquant is not None:
        subprocess.run(
            [
                pngquant,
                "--force",
                "--skip-if-larger",
                "--strip",
                "--output",
                str(path),
                "256",
                "--",
                str(path),
            ],
            check=False,
        )
    size = path.stat().st_size
    if size > LIMIT:
        raise SystemExit(f"{path} is {size:,} bytes, over {LIMIT:,}: install pngquant")


def main() -> None:
    IMG.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        made = shoot(write_pages(Path(tmp)))
    for path in made:
        shrink(path)
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
