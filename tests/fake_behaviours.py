"""How real servers behave, for the fakes in tests/fake_providers.py: what a server refuses and with which
words, how a cut or filtered reply looks on each wire, and replies that write tool calls as text.

``Server`` says what one fake server cannot do (tools, images, more than N images, images over N bytes,
prompts over N tokens); ``refusal`` gives the status and body the real server sends then, in its own
wording (sources beside each). ``finish_fields`` puts a stop reason in each provider's own shape. The
``*_text`` functions are replies of models that write their tool calls (or their answer) as text.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

# The servers an OpenAI-compatible fake can play: the wording of its refusals differs.
FLAVOURS = ("openai", "vllm", "llamacpp")


@dataclass(frozen=True)
class Server:
    """What a fake server refuses. None / True: no limit."""

    tools: bool = True  # False: refuses any request carrying ``tools``
    vision: bool = True  # False: refuses any request carrying an image
    max_images: int | None = None  # vLLM --limit-mm-per-prompt
    max_image_bytes: int | None = None  # per image (Anthropic 5 MB, OpenAI 20 MB)
    context_tokens: int | None = None  # request bytes / 4 above this: refused (Ollama truncates silently)
    flavour: str = "openai"  # openai, vllm or llamacpp (only for the openai kind)
    capabilities: tuple[str, ...] = field(default=("completion", "tools", "vision"))  # Ollama /api/show
    named_choice: bool = True  # False: refuses a tool_choice that names a tool or says "required"


# Servers that take tool_choice "auto" and "none" only (older vLLM, llama.cpp's server, some proxies)
CHOICE_REFUSED = "Only 'auto' and 'none' tool_choice are supported by this server"


def images_of(kind: str, body: dict[str, Any]) -> list[bytes]:
    """The decoded images of one request, in the provider's own wire format."""
    found: list[str] = []
    if kind == "openai":
        for m in body.get("messages") or []:
            for p in m.get("content") if isinstance(m.get("content"), list) else []:
                if isinstance(p, dict) and p.get("type") == "image_url":
                    found.append(str((p.get("image_url") or {}).get("url", "")).partition("base64,")[2])
    elif kind == "anthropic":
        for m in body.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                blocks = [b, *(b.get("content") if isinstance(b.get("content"), list) else [])]
                found += [x["source"].get("data", "") for x in blocks if isinstance(x, dict)
                          and x.get("type") == "image" and isinstance(x.get("source"), dict)]
    elif kind == "gemini":
        for c in body.get("contents") or []:
            for p in c.get("parts") or []:
                inline = p.get("inlineData") or p.get("inline_data")
                if inline:
                    found.append(inline.get("data", ""))
    else:
        for m in body.get("messages") or []:
            found += [i for i in m.get("images") or [] if isinstance(i, str)]
    out = []
    for data in found:
        try:
            out.append(base64.b64decode(data))
        except ValueError:
            out.append(b"")
    return out


def refusal(kind: str, server: Server, body: dict[str, Any], size: int, model: str) -> tuple[int, Any] | None:
    """(status, body) of the real server's refusal of this request, or None when it takes it."""
    flavour = server.flavour if kind == "openai" else kind
    if kind == "anthropic" and (refused := _thinking_not_replayed(body)) is not None:
        return refused
    if not server.tools and body.get("tools"):
        return _tools_refused(flavour, model)
    if not server.named_choice and body.get("tools") and body.get("tool_choice") not in (None, "auto", "none"):
        return 400, error_body(kind, flavour, 400, CHOICE_REFUSED)
    images = images_of(kind, body)
    if images and not server.vision:
        return _no_vision(flavour, model)
    if server.max_images is not None and len(images) > server.max_images:
        # vLLM (multimodal input processing): "At most 1 image(s) may be provided in one request."
        # Anthropic: "Too many images and documents: 101 > 100"; Ollama (mllama, server/prompt.go, a 500):
        # "this model only supports one image while more than one image requested"
        if kind == "ollama":
            return 500, {"error": "this model only supports one image while more than one image requested"}
        text = (f"Too many images and documents: {len(images)} > {server.max_images}" if kind == "anthropic"
                else f"At most {server.max_images} image(s) may be provided in one request.")
        return 400, error_body(kind, flavour, 400, text)
    big = [len(i) for i in images if server.max_image_bytes is not None and len(i) > server.max_image_bytes]
    if big:
        return _too_large(kind, flavour, big[0], server.max_image_bytes or 0)
    tokens = size // 4
    if server.context_tokens is not None and tokens > server.context_tokens and kind != "ollama":
        return _too_long(kind, flavour, tokens, server.context_tokens)
    return None


def thinking_enabled(body: dict[str, Any]) -> bool:
    """Whether an Anthropic request turned extended thinking on."""
    return isinstance(body.get("thinking"), dict) and body["thinking"].get("type") == "enabled"


def _thinking_not_replayed(body: dict[str, Any]) -> tuple[int, Any] | None:
    """Anthropic's refusal of a request with thinking on whose last assistant turn with tool_use does not start
    with the thinking block it was sent with (extended thinking with tool use: "you must pass thinking blocks
    back to the API for the last assistant message")."""
    if not thinking_enabled(body):
        return None
    if isinstance(body.get("tool_choice"), dict) and body["tool_choice"].get("type") in ("any", "tool"):
        # extended thinking takes only tool_choice auto or none
        return 400, error_body("anthropic", "anthropic", 400,
                               "Thinking may not be enabled when tool_choice forces tool use.")
    for n in range(len(body.get("messages") or []) - 1, -1, -1):
        m = body["messages"][n]
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        if m.get("role") != "assistant" or not any(b.get("type") == "tool_use" for b in blocks):
            continue
        if blocks[0].get("type") in ("thinking", "redacted_thinking"):
            return None
        return 400, error_body("anthropic", "anthropic", 400, (
            f"messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must start with "
            "a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend "
            "you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`."))
    return None


def _tools_refused(flavour: str, model: str) -> tuple[int, Any]:
    if flavour == "ollama":  # Ollama server/routes.go, for a model whose template has no tools
        return 400, {"error": f"registry.ollama.ai/library/{model}:latest does not support tools"}
    if flavour == "vllm":  # vLLM serving_chat.py without --enable-auto-tool-choice
        return 400, error_body("openai", "vllm", 400, '"auto" tool choice requires --enable-auto-tool-choice and '
                                                      "--tool-call-parser to be set")
    if flavour == "llamacpp":  # llama-server without --jinja
        return 500, error_body("openai", "llamacpp", 500, "tools param requires --jinja flag")
    if flavour == "gemini":
        return 400, error_body("gemini", "gemini", 400, f"Function calling is not enabled for models/{model}")
    return 400, error_body(flavour, flavour, 400, "tools: tool use is not supported for this model")


def _no_vision(flavour: str, model: str) -> tuple[int, Any]:
    if flavour == "ollama":  # Ollama server/routes.go, a model without a vision projector
        return 500, {"error": "this model is missing data required for image input"}
    if flavour == "vllm":
        return 400, error_body("openai", "vllm", 400, f"{model} is not a multimodal model None")
    if flavour == "llamacpp":  # llama-server started without --mmproj
        return 500, error_body("openai", "llamacpp", 500, "image input is not supported - hint: if this is "
                                                          "unexpected, you may need to provide the mmproj")
    if flavour == "openai":
        return 400, error_body("openai", "openai", 400, "Invalid content type. image_url is only supported by "
                                                        "certain models.")
    return 400, error_body(flavour, flavour, 400, "this model does not support image input")


def _too_large(kind: str, flavour: str, got: int, limit: int) -> tuple[int, Any]:
    if kind == "anthropic":
        text = f"messages.1.content.1.image.source.base64: image exceeds 5 MB maximum: {got} bytes > {limit} bytes"
    elif kind == "gemini":
        text = f"Request payload size exceeds the limit: {limit} bytes."
    elif flavour == "openai":
        text = ("You uploaded an unsupported image. Please make sure your image is below 20 MB in size and is of "
                "one the following formats: ['png', 'jpeg', 'gif', 'webp'].")
    else:
        text = f"image too large: {got} bytes > {limit} bytes"
    return 400, error_body(kind, flavour, 400, text)


def _too_long(kind: str, flavour: str, tokens: int, limit: int) -> tuple[int, Any]:
    if kind == "anthropic":
        return 400, error_body(kind, flavour, 400, f"prompt is too long: {tokens} tokens > {limit} maximum")
    if kind == "gemini":
        return 400, error_body(kind, flavour, 400, f"The input token count ({tokens}) exceeds the maximum number "
                                                   f"of tokens allowed ({limit}).")
    if flavour == "llamacpp":
        return 400, {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                               "increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": tokens,
                               "n_ctx": limit}}
    body = error_body(kind, flavour, 400, f"This model's maximum context length is {limit} tokens. However, your "
                                          f"messages resulted in {tokens} tokens. Please reduce the length of the "
                                          "messages.")
    if flavour == "openai":
        body["error"]["code"] = "context_length_exceeded"
    return 400, body


def error_body(kind: str, flavour: str, status: int, message: str) -> dict[str, Any]:
    """An error body in the server's own shape."""
    if kind == "openai" and flavour == "vllm":
        return {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": status}
    if kind == "openai" and flavour == "llamacpp":
        return {"error": {"code": status, "message": message, "type": "server_error" if status >= 500
                          else "invalid_request_error"}}
    if kind == "openai":
        kind_ = "rate_limit_error" if status == 429 else "invalid_request_error" if status < 500 else "server_error"
        return {"error": {"message": message, "type": kind_, "param": None, "code": None}}
    if kind == "anthropic":
        kind_ = {429: "rate_limit_error", 529: "overloaded_error"}.get(
            status, "invalid_request_error" if status < 500 else "api_error")
        return {"type": "error", "error": {"type": kind_, "message": message}}
    if kind == "gemini":
        state = {429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
        return {"error": {"code": status, "message": message, "status": state}}
    return {"error": message}


# Overloaded: Anthropic 529 overloaded_error; the others' 503 wordings.
OVERLOAD = {"anthropic": (529, "Overloaded"), "openai": (503, "The engine is currently overloaded, please try "
                                                              "again later"),
            "gemini": (503, "The model is overloaded. Please try again later."),
            "ollama": (503, "server busy, please try again.  maximum pending requests exceeded")}


# --- stop reasons in each provider's shape ---------------------------------------------------------------


def finish_fields(kind: str, finish: str) -> dict[str, Any]:
    """The provider's own stop-reason fields for a normalised ``finish`` (stop, length, content_filter)."""
    if kind == "openai":
        return {"finish_reason": finish}
    if kind == "anthropic":
        return {"stop_reason": {"length": "max_tokens", "content_filter": "refusal"}.get(finish, "end_turn")}
    if kind == "gemini":
        return {"finishReason": {"length": "MAX_TOKENS", "content_filter": "SAFETY"}.get(finish, "STOP")}
    return {"done_reason": {"length": "length"}.get(finish, "stop")}


GEMINI_SAFETY = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]


# --- replies that write tool calls or answers as text ------------------------------------------------------


def bare_json_text(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def fenced_text(name: str, arguments: dict[str, Any]) -> str:
    return "I will search the documents.\n```json\n" + json.dumps({"name": name, "arguments": arguments}) + "\n```"


def hermes_text(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def mistral_text(name: str, arguments: dict[str, Any]) -> str:
    return "[TOOL_CALLS] " + json.dumps([{"name": name, "arguments": arguments}])


def think_text(inner: str) -> str:
    return "<think>The user asks about revenue. I should search first.</think>\n" + inner


def prose_answer_text(value: str) -> str:
    return f"The answer is {value}, as stated in report.pdf on page 1."


REFUSAL_TEXT = "I cannot find this information in the documents."
CUT_TEXT = "Let me think about this carefully. The documents show that the"


# --- bodies real servers and the proxies in front of them send (issue 37) ------------------------------------


def gemini_quota(delay: str = "3s") -> str:
    """Gemini's 429 for a per-minute quota: RESOURCE_EXHAUSTED with the delay to wait in RetryInfo (no
    Retry-After header)."""
    return json.dumps({"error": {"code": 429, "message": "You exceeded your current quota, please check your plan "
                                 "and billing details.", "status": "RESOURCE_EXHAUSTED", "details": [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
            {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
             "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]}})


def html_page(status: int, title: str) -> str:
    """An error page of nginx (or another proxy) in front of the model server."""
    return (f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n"
            "<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n")


# The variable litellm reads each kind's key from (what a rejected key's error must name)
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
                 "ollama": "OLLAMA_API_KEY"}
# OpenRouter, out of credits (402)
CREDITS = json.dumps({"error": {"message": "Insufficient credits. This account never purchased credits. Make sure "
                                "your key is on the correct account or org, and if so, purchase more at "
                                "https://openrouter.ai/settings/credits", "code": 402}})
# OpenRouter, an upstream provider's failure sent as a 200 whose body is an error object
ERROR_IN_200 = json.dumps({"error": {"message": "Provider returned error", "code": 502,
                                     "metadata": {"provider_name": "Fireworks", "raw": "upstream timed out"}}})
# A stream with no chunk at all, only its end (a proxy that forces streaming, a crashed generation)
DONE_ONLY = "data: [DONE]\n\n"
