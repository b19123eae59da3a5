"""rubrics."""

__all__: list[str] = []
