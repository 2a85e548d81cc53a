"""The toolkit's version, in a module of its own that every layer may import."""

__all__ = ["__version__"]

__version__ = "0.1.0"
