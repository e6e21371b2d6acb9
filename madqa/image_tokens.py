"""Approximate image tokens per page image under each provider's published rule (used by the benchmarks
and by the litellm backend's usage estimate when a server sends no token counts).

Estimates, not bills: providers change rules and round differently. Each rule names its source.
"""

from __future__ import annotations

import math

SOURCES = {
    "openai_tiles": "OpenAI, Images and vision guide, 'Calculating costs' (GPT-4o, GPT-4.1, detail=high): fit in "
                    "2048x2048, scale the shortest side to 768, 170 tokens per 512px tile + 85; "
                    "https://platform.openai.com/docs/guides/images-vision",
    "openai_patches": "Same guide, GPT-4.1-mini/nano, o4-mini: 32px patches, capped at 1536 (image scaled down to "
                      "fit), times 1.62 for gpt-4.1-mini",
    "anthropic": "Anthropic, Vision guide, 'Evaluate image size': tokens = width*height/750; an image whose long "
                 "edge exceeds 1568 px or that exceeds ~1,600 tokens is first scaled down, keeping its aspect; "
                 "https://docs.anthropic.com/en/docs/vision",
    "gemini": "Google, Gemini API 'Understand and count tokens' (Gemini 2.x): 258 tokens when both sides <= 384 px, "
              "else 258 per 768x768 tile; https://ai.google.dev/gemini-api/docs/tokens",
}


def openai_tiles(width: int, height: int) -> int:
    """GPT-4o / GPT-4.1 at detail=high."""
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        s = 2048 / max(w, h)
        w, h = w * s, h * s
    s = 768 / min(w, h)  # the guide scales the shortest side to 768 (only ever down, in its examples)
    if s < 1:
        w, h = w * s, h * s
    tiles = math.ceil(int(w) / 512) * math.ceil(int(h) / 512)
    return 85 + 170 * tiles


def openai_patches(width: int, height: int, multiplier: float = 1.62, cap: int = 1536) -> int:
    """GPT-4.1-mini (multiplier 1.62; 2.46 for nano, 1 for the raw patch count)."""
    w, h = float(width), float(height)
    patches = math.ceil(w / 32) * math.ceil(h / 32)
    if patches > cap:
        s = math.sqrt(cap * 32 * 32 / (w * h))
        w, h = w * s, h * s
        s = math.floor(w / 32) / (w / 32)  # then shrink so the width is a whole number of patches
        w, h = int(w * s), int(h * s)
        patches = math.ceil(w / 32) * math.ceil(h / 32)
    return round(patches * multiplier)


def anthropic(width: int, height: int, max_edge: int = 1568, max_tokens: int = 1600) -> int:
    """Claude: area / 750 after scaling down to the long-edge and token limits."""
    w, h = float(width), float(height)
    if max(w, h) > max_edge:
        s = max_edge / max(w, h)
        w, h = w * s, h * s
    if w * h / 750 > max_tokens:
        s = math.sqrt(max_tokens * 750 / (w * h))
        w, h = w * s, h * s
    return math.ceil(int(w) * int(h) / 750)


def gemini(width: int, height: int) -> int:
    """Gemini 2.x: one 258-token image when small, else 258 per 768x768 tile."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


RULES = {"openai_tiles": openai_tiles, "openai_patches": openai_patches, "anthropic": anthropic, "gemini": gemini}


def tokens_per_page(width: int, height: int) -> dict[str, int]:
    """Every rule's estimate for one image of ``width`` x ``height`` pixels."""
    return {name: rule(width, height) for name, rule in RULES.items()}


PROVIDER_RULES = {"anthropic": anthropic, "gemini": gemini, "vertex_ai": gemini}  # by litellm provider; else OpenAI tiles


def provider_image_tokens(width: int, height: int, provider: str | None) -> int:
    """Approximate tokens of one image of this size under ``provider``'s published rule (OpenAI's tiles
    for providers without a rule of their own)."""
    return PROVIDER_RULES.get(provider or "", openai_tiles)(width, height)
