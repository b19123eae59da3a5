"""lm."""

__all__: list[str] = []
