"""Built-in text plugins."""
