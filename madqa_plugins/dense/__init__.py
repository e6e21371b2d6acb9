"""Built-in dense plugins."""
