"""Built-in litellm plugins."""
