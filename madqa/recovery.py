"""Sending less when a model's server refuses a request for a limit: a pure function of what was sent.

A server that allows one image per request (vLLM's ``limit_mm_per_prompt``), a text-only model, an
image over the provider's size limit or a request over the context window used to end the question.
``recover`` says what to send instead (fewer images per request, page text instead of images,
smaller images, older pages as excerpts) and a note for the trajectory, or None when nothing is
left to cut. What it learns holds for the rest of the run: the agent keeps the new ``Sending``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from madqa.context import ContextOptions
from madqa.errors import ServerLimitError

# Images are never re-drawn below this many pixels (~0.25 MP, e.g. 430 x 580): small print on a page
# drawn smaller than that cannot be read, so past it the page goes as text instead.
MIN_IMAGE_BUDGET_PX = 250_000
MIN_TEXT_CHARS = 500  # the least page text sent in place of an image when the context is too long


@dataclass(frozen=True)
class Sending:
    """What the loop sends the model: the context policy's options, the image budget, images at all."""

    context: ContextOptions
    image_budget_px: int
    vision: bool = True


def images_in(messages: list[dict[str, Any]]) -> int:
    """How many image parts a request carries."""
    return sum(1 for m in messages if isinstance(m.get("content"), list)
               for p in m["content"] if isinstance(p, dict) and p.get("type") == "image_url")


def recover(error: ServerLimitError, sending: Sending, images_sent: int) -> tuple[Sending, str] | None:
    """What to send instead after ``error`` (and a note saying so), or None when nothing is left to cut."""
    context = sending.context
    if error.limit == "vision":
        if not sending.vision:
            return None
        return replace(sending, vision=False), "the model does not accept images: pages are sent as their text"
    if error.limit == "images_per_request":
        allowed = error.value if error.value is not None and error.value < images_sent else images_sent // 2
        if images_sent == 0 or allowed <= 0:
            if not sending.vision:
                return None
            return replace(sending, vision=False), ("the server takes no images in this request: pages are sent "
                                                    "as their text")
        return (replace(sending, context=replace(context, max_images_per_request=allowed)),
                f"the server allows at most {allowed} image(s) per request: the other pages are sent as text")
    if error.limit == "image_size":
        if not sending.vision or sending.image_budget_px <= MIN_IMAGE_BUDGET_PX:
            return None
        budget = max(MIN_IMAGE_BUDGET_PX, sending.image_budget_px // 2)
        return replace(sending, image_budget_px=budget), f"an image was too large for the server: pages redrawn at {budget:,} px"
    # context_length: older images first, then fewer images, then shorter page texts
    if context.images_kept > 0:
        return (replace(sending, context=replace(context, images_kept=0)),
                "the request was too long for the model: earlier pages are sent as excerpts")
    if sending.vision and images_sent > 1:
        allowed = images_sent // 2
        return (replace(sending, context=replace(context, max_images_per_request=allowed)),
                f"the request was too long for the model: at most {allowed} image(s) per request, the rest as text")
    if sending.vision and images_sent == 1:
        return replace(sending, vision=False), "the request was too long for the model: pages are sent as text"
    if context.text_chars > MIN_TEXT_CHARS or context.excerpt_chars > MIN_TEXT_CHARS // 4:
        text_chars = max(MIN_TEXT_CHARS, context.text_chars // 2)
        excerpt = max(MIN_TEXT_CHARS // 4, context.excerpt_chars // 2)
        return (replace(sending, context=replace(context, text_chars=text_chars, excerpt_chars=excerpt)),
                f"the request was too long for the model: page texts cut to {text_chars} characters")
    return None
