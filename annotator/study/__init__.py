"""A study and what its leads do with it, apart from the web pages."""
