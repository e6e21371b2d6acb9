"""Built-in madqa plugins: ordinary plugins written against madqa's public API."""
