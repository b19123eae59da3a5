"""data/adapters."""

__all__: list[str] = []
