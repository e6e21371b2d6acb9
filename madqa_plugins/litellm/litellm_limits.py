"""What a server's refusal means: a limit the loop can work around, or a server without tool calling.

Recognised from the real wordings of vLLM, Ollama, llama.cpp's server, OpenAI, Anthropic and Gemini
(each pattern names where it comes from). Pure functions of the error's text and HTTP status: no
litellm here, so the patterns are tested on their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (limit, pattern): the first that matches wins; images_per_request's pattern may capture the number.
_LIMITS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # vLLM limit_mm_per_prompt: "At most 1 image(s) may be provided in one request." (older: "in one prompt")
    ("images_per_request", re.compile(r"at most (\d+) image\(s\) may be provided")),
    # Ollama (llama3.2-vision): "this model only supports one image while more than one image requested"
    ("images_per_request", re.compile(r"only supports (one) image")),
    # Anthropic: "Too many images and documents: 101 > 100"; generic wordings of the same limit
    ("images_per_request", re.compile(r"too many images|(?:at most|maximum(?: of)?|up to|only) (\d+) images? "
                                      r"(?:are |is )?(?:allowed|supported|per (?:request|prompt))")),
    # OpenAI: "Invalid content type. image_url is only supported by certain models."
    ("vision", re.compile(r"image_url is only supported by certain models")),
    # vLLM: "<model> is not a multimodal model"
    ("vision", re.compile(r"is not a multimodal model")),
    # llama.cpp server: "image input is not supported - hint: ... you may need to provide the mmproj";
    # older: "The server was not compiled for multimodal or the model projector can't be loaded."
    ("vision", re.compile(r"image input is not supported|provide the mmproj|not compiled for multimodal|"
                          r"multimodal (?:is )?not supported")),
    # Ollama (a model without a vision projector): "this model is missing data required for image input";
    # LM Studio and others: "model does not support images", "... does not support vision"
    ("vision", re.compile(r"missing data required for image input|does not support (?:image|vision)|images? (?:input )?(?:is |are )?not supported|"
                          r"vision is not supported|does not accept images")),
    # Anthropic: "image exceeds 5 MB maximum: 6500712 bytes > 5242880 bytes"; "At least one of the image
    # dimensions exceed max allowed size (for many-image requests): 2000 pixels"; OpenAI: "You uploaded an
    # unsupported image. Please make sure your image is below 20 MB"; Gemini: "Request payload size exceeds
    # the limit: 20971520 bytes."
    ("image_size", re.compile(r"image exceeds \d+ ?mb|image dimensions exceed|image (?:is )?too large|"
                              r"image is below \d+ ?mb|image size exceeds|payload size exceeds|"
                              r"request exceeds the maximum size|request_too_large")),
    # OpenAI "context_length_exceeded" / "This model's maximum context length is 128000 tokens" (also vLLM);
    # Anthropic "prompt is too long: 210000 tokens > 200000 maximum"; llama.cpp "the request exceeds the
    # available context size"; Gemini "The input token count (1200000) exceeds the maximum number of tokens
    # allowed (1048576)."; Ollama "input length exceeds the context length"
    ("context_length", re.compile(r"context_length_exceeded|maximum context length|prompt is too long|"
                                  r"exceeds? the available context size|exceed_context_size|input token count|"
                                  r"exceeds the context (?:length|window|size)|context window exceeded|"
                                  r"too many tokens|input is too long|reduce the length of the messages")),
)

# A server that refuses the ``tools`` parameter itself (not a bad call): Ollama "registry.ollama.ai/library/
# llava:latest does not support tools" (400); vLLM without --enable-auto-tool-choice: '"auto" tool choice
# requires --enable-auto-tool-choice and --tool-call-parser to be set' (400); llama.cpp's server without
# --jinja: "tools param requires --jinja flag" (500), older: "Unsupported param: tools" (500); Gemini models
# without function calling: "Function calling is not enabled for models/..."; generic wordings.
_TOOLS_REFUSED = re.compile(
    r"does not support tools|tool choice requires --enable-auto-tool-choice|enable-auto-tool-choice|"
    r"tools param requires --jinja|unsupported param: tools|function calling is not enabled|"
    r"does not support (?:function|tool) call|(?:function|tool) calling is not supported|"
    r"tools? (?:use )?(?:is |are )?not supported|tool_choice is not supported")


@dataclass(frozen=True)
class Limit:
    """A server limit: one of madqa.ServerLimitError.LIMITS, and the number the server allows if it said."""

    limit: str
    value: int | None = None


def server_limit(text: str, status: int | None = None, context_error: bool = False) -> Limit | None:
    """The limit a refusal names, from its (provider's) text; None when it names none.

    ``context_error``: litellm already told it is a context-window error (its ContextWindowExceededError).
    A 413 (payload too large) with no known wording is taken as too-large images: page images are
    nearly all of a request's bytes."""
    low = (text or "").lower()
    for limit, pattern in _LIMITS:
        match = pattern.search(low)
        if match is None:
            continue
        number = next((g for g in match.groups() if g), None) if match.groups() else None
        value = (1 if number == "one" else int(number)) if number is not None else None
        if limit == "images_per_request" and value == 0:  # "At most 0 image(s)": no images at all
            return Limit("vision")
        return Limit(limit, value)
    if context_error:
        return Limit("context_length")
    if status == 413:
        return Limit("image_size")
    return None


def tools_refused(text: str) -> bool:
    """Whether a refusal says the server or model takes no ``tools`` parameter (so: use the text protocol)."""
    return bool(_TOOLS_REFUSED.search((text or "").lower()))
