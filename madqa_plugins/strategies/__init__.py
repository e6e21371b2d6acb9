"""Built-in strategies plugins."""
