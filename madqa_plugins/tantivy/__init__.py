"""Built-in tantivy plugins."""
