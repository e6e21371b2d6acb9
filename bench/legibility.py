"""Legibility guard: can the image we send still be read? OCR it and count the text layer's words recovered.

For each page whose text came from its text layer, the image we would send (our renderer, our
format) is OCR'd with Tesseract; the share of the text layer's words (lower-cased ``\\w+`` tokens,
counted with multiplicity) found in the OCR text is that page's recovery. A budget is acceptable
when the mean over pages stays at or above ``THRESHOLD``.

Tesseract is tuned for ~300 DPI scans; a 1.2-megapixel page is ~110 DPI, where it misreads text a
person (or a vision model) reads easily. So the image is enlarged 2x (Lanczos: no information is
added) and read in sparse-text mode (``--psm 11``: every word wherever it is, order ignored, which
is what a bag-of-words recovery measures). Figures are therefore a lower bound on legibility.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import statistics
import subprocess
from collections import Counter
from pathlib import Path

from bench import image_tokens

THRESHOLD = 0.95
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> Counter:
    return Counter(w.lower() for w in _WORD.findall(text))


def recovered_share(reference: str, ocr: str) -> float:
    """Share of ``reference``'s words (with multiplicity) that also occur in ``ocr``; 1.0 when it has none."""
    want = words(reference)
    total = sum(want.values())
    if not total:
        return 1.0
    got = words(ocr)
    return sum(min(n, got[w]) for w, n in want.items()) / total


def ocr_image(data: bytes, language: str = "eng", upscale: int = 2) -> str:
    """Tesseract's text for an encoded image (PNG, JPEG or WebP bytes), enlarged ``upscale`` times, one thread."""
    if upscale > 1:
        from PIL import Image

        image = Image.open(io.BytesIO(data))
        buffer = io.BytesIO()
        image.resize((image.width * upscale, image.height * upscale), Image.LANCZOS).save(buffer, format="PNG")
        data = buffer.getvalue()
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    out = subprocess.run(["tesseract", "stdin", "stdout", "-l", language, "--psm", "11"], input=data,
                         capture_output=True, env=env, check=True, timeout=120)
    return out.stdout.decode("utf-8", "replace")


def available() -> bool:
    return shutil.which("tesseract") is not None


def measure(corpus, settings, budgets: list[int], max_pages: int | None = None) -> dict:
    """Mean / min recovery per budget over the corpus's text-layer pages (the first ``max_pages``)."""
    from madqa.render import render_uncached

    pages = [(p.file, p.page, p.text) for p in corpus.iter_pages() if p.source == "text"]
    pages = pages[:max_pages] if max_pages else pages
    rows = []
    for budget in budgets:
        shares, sizes = [], []
        for file, page, text in pages:
            image = render_uncached(Path(corpus.pdf_path(file)), page, budget, settings.image_format)
            shares.append(recovered_share(text, ocr_image(image.data)))
            sizes.append((image.width, image.height))
        mean = sum(shares) / len(shares)
        width, height = statistics.mode(sizes)
        rows.append({"budget_px": budget, "pages": len(shares), "mean": mean, "min": min(shares),
                     "pages_below_95": sum(s < THRESHOLD for s in shares), "size_px": f"{width}x{height}",
                     "tokens_per_page": image_tokens.tokens_per_page(width, height), "acceptable": mean >= THRESHOLD})
    return {"threshold": THRESHOLD, "corpus": str(corpus.root), "budgets": rows}
