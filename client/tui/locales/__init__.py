"""The catalogue's languages: one module per language, each a ``MESSAGES``
dict keyed by message id. English is the original; every other language has
the same keys and the same ``{fields}`` (a test checks both)."""
