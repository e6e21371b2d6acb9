"""Built-in readers plugins."""
