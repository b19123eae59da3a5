"""The option groups several commands share, declared once.

``@shared_options(MODEL, EXECUTION)`` adds every option of the groups to a typer command
(after the command's own, with the one help text and default of :mod:`._options`) and hands
them to it as one argument, ``opts`` (:class:`SharedOptions`), which turns them into the
library's objects: ``opts.model(lms)`` (:class:`attune_judge.lm.LMSettings`, the models
checked first) and ``opts.execution()`` (the :class:`attune_judge.runner.ExecutionOptions`
keywords). A command never re-declares or forwards them one by one.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, get_type_hints

from attune_judge.cli._options import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_WORKERS,
    AdaptiveOption,
    ApiBaseOption,
    ExecutorKind,
    ExecutorOption,
    MaxConcurrencyOption,
    MaxTokensOption,
    RayAddressOption,
    ResponseFormatChoice,
    ResponseFormatOption,
    TemperatureOption,
    TimeoutOption,
    WorkersOption,
)

if TYPE_CHECKING:
    from attune_judge.lm import LMSettings

__all__ = [
    "EXECUTION",
    "MODEL",
    "SharedOptions",
    "execution_options",
    "model_options",
    "shared_options",
]

Group = tuple[tuple[str, Any, Any], ...]
"""``(parameter name, Annotated option, default)`` of every option of a group."""

MODEL: Group = (
    ("api_base", ApiBaseOption, None),
    ("response_format", ResponseFormatOption, None),
    ("temperature", TemperatureOption, None),
    ("max_tokens", MaxTokensOption, None),
    ("timeout", TimeoutOption, None),
)
"""The model options of every command that calls a model (``--lm`` is the command's own)."""

EXECUTION: Group = (
    ("executor", ExecutorOption, ExecutorKind.thread),
    ("workers", WorkersOption, DEFAULT_WORKERS),
    ("ray_address", RayAddressOption, None),
    ("max_concurrency", MaxConcurrencyOption, DEFAULT_MAX_CONCURRENCY),
    ("adaptive", AdaptiveOption, True),
)
"""The execution options of every command that runs work concurrently."""


def model_options(
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    response_format: ResponseFormatChoice | None = None,
    timeout: float | None = None,
    lms: str | Sequence[str] | None = None,
    api_base: str | None = None,
    seed: int | None = None,
    cache: bool | None = None,
) -> LMSettings:
    """The command's :class:`attune_judge.lm.LMSettings`, built once: its options over the
    ``ATTUNE_*`` variables (:meth:`~attune_judge.lm.LMSettings.from_env`), ``lm`` the first
    of ``lms`` (the others of a jury are its members: :meth:`LMSettings.member`).

    ``lms`` (the command's ``--lm`` values) are checked with ``api_base`` first, before any
    heavy import (:func:`attune_judge.lm.check_model`), so an option error is immediate.
    """
    from attune_judge.lm import LMSettings, check_model, member_api_base

    several = [lms] if isinstance(lms, str) else list(lms or [])
    for lm in several:
        check_model(lm, member_api_base(lm, api_base, jury=len(several) > 1))
    return LMSettings.from_env(
        lm=several[0] if several else None,
        api_base=api_base,
        temperature=temperature,
        max_tokens=max_tokens,
        response_format=response_format.value if response_format is not None else None,
        timeout=timeout,
        seed=seed,
        cache=cache,
    )


def execution_options(
    *,
    executor: ExecutorKind = ExecutorKind.thread,
    workers: int = DEFAULT_WORKERS,
    ray_address: str | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    adaptive: bool = True,
) -> Any:
    """The execution options as an :class:`attune_judge.runner.ExecutionOptions`."""
    from attune_judge.runner import ExecutionOptions

    return ExecutionOptions(
        executor=executor.value,
        workers=workers,
        ray_address=ray_address,
        max_concurrency=max_concurrency,
        adaptive=adaptive,
    )


_MODEL_NAMES = tuple(name for name, _, _ in MODEL)
_EXECUTION_NAMES = tuple(name for name, _, _ in EXECUTION)


class SharedOptions:
    """The values of a command's shared options (``opts.api_base``, ``opts.model(lms)``, ...)."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def model(
        self, lms: str | Sequence[str] | None, *, seed: int | None = None, cache: bool | None = None
    ) -> LMSettings:
        """The command's :class:`attune_judge.lm.LMSettings` (:func:`model_options`), after
        checking ``lms`` (the command's ``--lm`` values) with ``--api-base``."""
        return model_options(
            lms=lms, seed=seed, cache=cache, **{k: self.values[k] for k in _MODEL_NAMES}
        )

    def execution(self) -> dict[str, Any]:
        """The :class:`attune_judge.runner.ExecutionOptions` keywords."""
        kwargs = execution_options(**{k: self.values[k] for k in _EXECUTION_NAMES}).as_kwargs()
        return dict(kwargs)


def shared_options(*groups: Group) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add ``groups``' options to a command that takes ``opts: SharedOptions``."""
    options = [o for group in groups for o in group]

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "opts"]
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
            for name, a, d in options
        ]

        @functools.wraps(command)
        def run(**kwargs: Any) -> Any:
            shared = {name: kwargs.pop(name) for name, _, _ in options}
            return command(**kwargs, opts=SharedOptions(shared))

        hints = get_type_hints(command, include_extras=True)
        run.__signature__ = signature.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
        run.__annotations__ = {
            **{p.name: hints[p.name] for p in own},
            **{name: a for name, a, _ in options},
            "return": hints.get("return"),
        }
        return run

    return decorate
