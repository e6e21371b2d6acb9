"""Built-in offline plugins."""
