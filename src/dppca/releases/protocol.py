"""The protocol every result follows, and the shared pieces that implement it.

:class:`~dppca.DirectionsResult`, :class:`~dppca.LoadingResult`,
:class:`~dppca.ScreeResult` and :class:`~dppca.ScoreResult` use the same names
for the same things (:class:`ReleaseResult`): ``cost``, ``eps``, ``delta``,
``n``, ``variables``, a computed ``private``, ``has_comparison``,
``nonprivate_parts()``, ``to_frame()`` and ``plot()``, which always returns
the matplotlib Axes of the (first) panel it drew on. Plans follow
:class:`dppca.releases.engine.ReleasePlan`.

This module is neutral ground: it imports no estimate module and no plotting
code, so the estimate modules and the plotting package can both use it. A
result's ``plot()`` asks the drawer registry here (:func:`drawer`) for the
function that draws it; the plotting package registers its drawers
(:func:`register_drawer`) when it is imported, so no result module imports
plotting code.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..core.lazy import pandas as pd
    from ..privacy.cost import PrivacyCost

__all__ = [
    "DIRECTIONS_SOURCES",
    "DirectionsSource",
    "FrozenPickle",
    "ReleaseResult",
    "ResultMixin",
    "check_directions_source",
    "drawer",
    "first_panel",
    "html_view",
    "register_drawer",
]

#: Where the directions of a scree or score release came from: released
#: privately in the call itself, an earlier private release passed in, or
#: public directions the caller vouched for.
DirectionsSource = Literal["private", "private release", "public"]
DIRECTIONS_SOURCES: tuple[str, ...] = ("private", "private release", "public")

_F = TypeVar("_F", bound=Callable[..., Any])
# Result class name -> the function its plot() calls: drawer(result, kind=, ax=, **kw).
_DRAWERS: dict[str, Callable[..., Any]] = {}
# The package whose import registers every drawer.
_PLOTTING = "dppca.plotting"


def register_drawer(result: str) -> Callable[[_F], _F]:
    """Register the decorated function as the drawer of ``result.plot()``.

    ``result`` is the result class's name (``"LoadingResult"``, ...). The
    function takes ``(result, kind=..., ax=None, **kwargs)`` and returns the
    matplotlib Axes of the (first) panel. Used by :mod:`dppca.plotting`.
    """

    def register(function: _F) -> _F:
        _DRAWERS[result] = function
        return function

    return register


def drawer(result: object) -> Callable[..., Any]:
    """The registered drawer of ``result`` (loads the plotting package on first use)."""
    name = type(result).__name__
    if name not in _DRAWERS:
        importlib.import_module(_PLOTTING)  # registers the drawers; needs matplotlib
    try:
        return _DRAWERS[name]
    except KeyError:
        raise TypeError(f"no drawer is registered for {name}.") from None


def html_view(result: object) -> str:
    """The notebook view of ``result`` (``_repr_html_``): picture, cost, what eps means.

    Loads :mod:`dppca.plotting.notebook` on first use (it needs matplotlib).
    """
    module = importlib.import_module(_PLOTTING + ".notebook")
    return str(module.result_html(result))


@runtime_checkable
class ReleaseResult(Protocol):
    """What every dppca result provides (for type hints and ``isinstance`` checks).

    Attributes
    ----------
    cost : PrivacyCost or None
        What the call that made the result spent; None for non-private results.
    eps, delta : float or None
        Read from ``cost``.
    n : int
        Number of rows of the data (public).
    variables : tuple of str
        The variable labels.
    private : bool
        True only when nothing in the result is non-private: no ``nonprivate*``
        comparison part and no label read from the data (see
        :meth:`nonprivate_parts`).
    has_comparison : bool
        Whether a non-private comparison (``compare=True``) is attached.
    """

    @property
    def cost(self) -> PrivacyCost | None: ...  # pragma: no cover - protocol

    @property
    def eps(self) -> float | None: ...  # pragma: no cover - protocol

    @property
    def delta(self) -> float | None: ...  # pragma: no cover - protocol

    @property
    def n(self) -> int: ...  # pragma: no cover - protocol

    @property
    def variables(self) -> tuple[str, ...]: ...  # pragma: no cover - protocol

    @property
    def private(self) -> bool: ...  # pragma: no cover - protocol

    @property
    def has_comparison(self) -> bool: ...  # pragma: no cover - protocol

    def nonprivate_parts(self) -> tuple[str, ...]: ...  # pragma: no cover - protocol

    def to_frame(self) -> pd.DataFrame: ...  # pragma: no cover - protocol

    def plot(
        self, kind: Any = ..., *, ax: Any = None, **kwargs: Any
    ) -> Axes: ...  # pragma: no cover


class FrozenPickle:
    """Pickling for frozen results that hold read-only mappings and arrays.

    ``types.MappingProxyType`` does not pickle and numpy arrays come back
    writeable from a pickle. The state written here holds each read-only
    mapping (at any depth, in fields, tuples or other mappings) as a tagged
    plain dict; loading rebuilds the read-only mappings and sets every array
    read-only again, so a loaded result is as frozen as the one saved.
    """

    def __getstate__(self) -> dict[str, Any]:
        return {name: _thaw(value) for name, value in self.__dict__.items()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, _refreeze(value))


class _ReadOnlyState(dict[Any, Any]):
    """A read-only mapping as it travels in a pickle (rebuilt on load)."""


def _thaw(value: Any) -> Any:
    """``value`` with every read-only mapping in it turned into a :class:`_ReadOnlyState`."""
    if isinstance(value, MappingProxyType):
        return _ReadOnlyState({k: _thaw(v) for k, v in value.items()})
    if type(value) is tuple:
        return tuple(_thaw(v) for v in value)
    return value


def _refreeze(value: Any) -> Any:
    """Undo :func:`_thaw` and set every array met on the way read-only."""
    if isinstance(value, _ReadOnlyState):
        return MappingProxyType({k: _refreeze(v) for k, v in value.items()})
    if type(value) is tuple:
        return tuple(_refreeze(v) for v in value)
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type | FrozenPickle):
        # a nested frozen part (a resolvability record, ...) unpickled by default
        for f in dataclasses.fields(value):
            _refreeze(getattr(value, f.name))
    return value


class ResultMixin(FrozenPickle):
    """The computed ``private`` flag, shared by every result class.

    A subclass says what in it is not private (:meth:`nonprivate_parts`);
    ``private`` is True exactly when that list is empty. It is computed, not
    stored, so it cannot disagree with what the result holds.
    """

    def nonprivate_parts(self) -> tuple[str, ...]:
        """Names of the parts of this result that are not private (empty if none)."""
        return ()

    @property
    def private(self) -> bool:
        """True when everything in this result is private or public.

        False as soon as one part is not: a non-private comparison
        (``compare=True``), directions computed without noise
        (:func:`dppca.pc_dir`), or labels read from the data. The private
        parts keep their (eps, delta) guarantee either way; the flag is about
        the object as a whole (what could be published as it is).
        :meth:`nonprivate_parts` names what makes it False.
        """
        return not self.nonprivate_parts()

    def privacy_sentence(self, alpha: float = 0.01) -> str:
        """What this result's privacy cost means to a membership attacker, in one sentence.

        See :func:`dppca.attacker_sentence` (``alpha`` is the attacker's
        false-alarm rate). For a result with no cost it says it is not private.
        """
        from ..privacy.tradeoff import attacker_sentence

        return attacker_sentence(getattr(self, "cost", None), alpha)

    def _repr_html_(self) -> str:
        """The notebook view: the default picture, the cost, what eps means, warnings."""
        return html_view(self)


def check_directions_source(value: object) -> str:
    """``value`` if it is one of :data:`DIRECTIONS_SOURCES`.

    Raises
    ------
    ValueError
        For any other value.
    """
    if value not in DIRECTIONS_SOURCES:
        raise ValueError(
            f"directions_source must be one of {DIRECTIONS_SOURCES!r}; got {value!r}."
        )
    return str(value)


def first_panel(drawn: Any, ax: Any = None) -> Axes:
    """The Axes of the first panel of what a plotting function returned.

    Plotting functions return an Axes for one panel and a Figure for several;
    results' ``plot()`` methods always return an Axes: the one given (the
    first of those given), or else the first panel of the new figure. The
    other panels are in ``ax.figure.axes``.
    """
    if not hasattr(drawn, "savefig"):
        return drawn
    if ax is not None:
        return ax if hasattr(ax, "figure") else _flat(ax)[0]
    return drawn.axes[0]


def _flat(axes: Any) -> list[Any]:
    """The Axes of a nested sequence or array of them, row by row."""
    if hasattr(axes, "ravel"):
        return list(axes.ravel())
    out: list[Any] = []
    for item in axes:
        out += [item] if hasattr(item, "figure") else _flat(item)
    return out
