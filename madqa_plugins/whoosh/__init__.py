"""Built-in whoosh plugins."""
