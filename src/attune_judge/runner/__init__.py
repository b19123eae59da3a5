"""runner."""

__all__: list[str] = []
