"""Built-in milvus plugins."""
