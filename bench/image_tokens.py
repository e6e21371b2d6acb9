"""Approximate image tokens per page image: the rules live in madqa.image_tokens (the litellm backend
estimates usage with them when a server sends none); re-exported here for the benchmarks."""

from madqa.image_tokens import RULES, SOURCES, anthropic, gemini, openai_patches, openai_tiles, tokens_per_page

__all__ = ["RULES", "SOURCES", "anthropic", "gemini", "openai_patches", "openai_tiles", "tokens_per_page"]
