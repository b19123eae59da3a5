"""tasks."""

__all__: list[str] = []
