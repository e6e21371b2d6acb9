"""What to say after a failure's kind so a user can fix it: the option or variable that does.

A rejected key names the variable the key came from (``backend.api_key_env``'s, else the provider's own) and
the option that names another; a timeout names ``backend.timeout`` with its value; a 413 on a request with no
image says the request was too large, with its size. Pure functions of the backend's state, no litellm here.
"""

from __future__ import annotations

import json
from typing import Any

# The variable litellm reads each provider's key from (its docs; the first when it reads several)
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
                 "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS", "mistral": "MISTRAL_API_KEY",
                 "groq": "GROQ_API_KEY", "openrouter": "OPENROUTER_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
                 "together_ai": "TOGETHERAI_API_KEY", "fireworks_ai": "FIREWORKS_AI_API_KEY",
                 "xai": "XAI_API_KEY", "cohere": "COHERE_API_KEY", "azure": "AZURE_API_KEY",
                 "hosted_vllm": "HOSTED_VLLM_API_KEY", "ollama": "OLLAMA_API_KEY", "ollama_chat": "OLLAMA_API_KEY"}


def key_variable(provider: str) -> str:
    """The environment variable litellm reads ``provider``'s key from."""
    return KEY_VARIABLES.get(provider, f"{provider.upper()}_API_KEY")


def key_hint(provider: str, source: str, env_name: str | None) -> str:
    """Where the rejected key came from and how to give another.

    ``source``: "env" (``backend.api_key_env`` named ``env_name``), "given" (the program handed one over: the
    web app's API key field), "placeholder" (none was given), else "provider" (litellm read the provider's own
    variable)."""
    other = "or name another variable with --set backend.api_key_env=NAME"
    if source == "env":
        return f"the key came from {env_name} (backend.api_key_env): set a valid key there, {other}"
    if source == "given":
        return (f"the key was the one handed over (the web app's API key field): paste a valid key, or set "
                f"{key_variable(provider)}, {other}")
    if source == "placeholder":
        return (f"no key was given and the server wants one: set {key_variable(provider)} in the environment, "
                f"{other}")
    return f"the key came from {key_variable(provider)}: set a valid key there, {other}"


def timeout_hint(timeout: float) -> str:
    return (f"backend.timeout is {timeout:g} s per attempt: raise it with --set backend.timeout=N for a slow or "
            "loaded server")


def has_images(messages: Any) -> bool:
    """Whether a request's messages carry any image part (OpenAI form, as the agent builds them)."""
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "image_url" for p in content):
            return True
    return False


def request_bytes(request: dict[str, Any]) -> int:
    """The size of a request's messages and tools as JSON (about what goes on the wire)."""
    return len(json.dumps({k: request.get(k) for k in ("messages", "tools")}, default=str).encode())


def too_large(request: dict[str, Any]) -> str:
    """Why a 413 came back on a request with no image: the request itself was too large, and what helps."""
    size = request_bytes(request)
    return (f"the request was too large ({size:,} bytes, about {size // 4:,} tokens?); a proxy in front of the "
            "server may cap request bodies (nginx client_max_body_size), or send less page text with "
            "--set context.text_chars=N")
