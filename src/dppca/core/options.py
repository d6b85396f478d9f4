"""Settings declared once: option objects checked at construction from one table.

Every release reads a :class:`PrivacyOptions` (the settings all entry points
share: budget, calibration, ties, bounds, scales, accuracy, missing values)
and one options object of its own kind (for example :class:`DirectionsOptions`).
Each class states its checks in ``_parameter_constraints``, a table from field
name to constraint, in the manner of scikit-learn's estimators. The checks run
once, when the object is built; plans read the fields and never check them
again, and internal re-planning derives new objects with :func:`evolve`, which
skips the checks (its values come from objects already checked).

Settings that need the table's shape (``k`` against p, ``m`` and ``delta``
against n, ``bounds`` against the column names) are checked by the plan, once,
where n and p are known.

A new shared option is one field of :class:`PrivacyOptions`, one row of its
table and its uses.
"""

from __future__ import annotations

import contextvars
import dataclasses
import math
import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from .data_checks import check_bounds
from .progress import resolve_progress
from .scalar_checks import check_bool, check_real, type_name
from .tables import check_missing, fill_docstring
from .validation import check_delta, check_eps

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "Boolean",
    "Check",
    "Choice",
    "Constraint",
    "DesignOptions",
    "DirectionsOptions",
    "Interval",
    "LoadingOptions",
    "PrivacyOptions",
    "check_components_option",
    "check_k_option",
    "document_design",
    "evolve",
    "invalid_examples",
    "release_options",
    "split_settings",
    "validate",
]

#: The one template of a refused option (the fix, where there is one, follows it).
MESSAGE = "{name} must be {requirement}; got {value!r}.{hint}"


def refuse(name: str, requirement: str, value: object, hint: str = "") -> ValueError:
    """The error for an option outside its constraint, worded by :data:`MESSAGE`."""
    return ValueError(
        MESSAGE.format(name=name, requirement=requirement, value=value, hint=hint and " " + hint)
    )


@dataclass(frozen=True)
class Choice:
    """One of a few values (strings, or None where listed)."""

    values: tuple[Any, ...]
    hint: str = ""

    def __call__(self, value: object, name: str) -> Any:
        if value is None and None in self.values:
            return None
        strings = tuple(v for v in self.values if v is not None)
        if isinstance(value, str) and value in strings:
            return value
        if None in self.values or len(strings) == 2:
            text = " or ".join(repr(v) for v in self.values)
        else:
            text = "one of " + ", ".join(repr(v) for v in strings)
        raise refuse(name, text, value, self.hint)

    def invalid(self) -> tuple[object, ...]:
        return ("no such option", 1)


@dataclass(frozen=True)
class Boolean:
    """True or False (numpy booleans too); 0, 1 and "yes" are refused."""

    def __call__(self, value: object, name: str) -> bool:
        return check_bool(value, name)

    def invalid(self) -> tuple[object, ...]:
        return (1, "yes", None)


@dataclass(frozen=True)
class Interval:
    """A finite real number between ``low`` and ``high`` (ends excluded when open)."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def __call__(self, value: object, name: str) -> float:
        return check_real(
            value,
            name,
            low=self.low,
            high=self.high,
            low_open=self.low_open,
            high_open=self.high_open,
        )

    def invalid(self) -> tuple[object, ...]:
        outside = self.low - 1.0 if math.isfinite(self.low) else self.high + 1.0
        return (math.nan, True, outside)


@dataclass(frozen=True)
class Check:
    """A check with more to it than a type and a range: a function ``check(value, name)``."""

    function: Callable[[Any, str], Any]
    examples: tuple[object, ...] = ()

    def __call__(self, value: object, name: str) -> Any:
        return self.function(value, name)

    def invalid(self) -> tuple[object, ...]:
        return self.examples


Constraint = Choice | Boolean | Interval | Check


def validate(name: str, value: object, constraint: Constraint) -> Any:
    """Check one option against its constraint; return the normalised value.

    The only place an option is checked (tests count its calls).
    """
    return constraint(value, name)


def invalid_examples(cls: type) -> Iterator[tuple[str, object]]:
    """Pairs (field, value) that the constraints of ``cls`` refuse (for generated tests)."""
    for name, constraint in cls._parameter_constraints.items():  # type: ignore[attr-defined]
        for value in constraint.invalid():
            yield name, value


# Set while evolve() derives an object from one already checked.
_TRUSTED: contextvars.ContextVar[bool] = contextvars.ContextVar("trusted", default=False)

_Options = TypeVar("_Options", bound="_Checked")


@contextmanager
def _trusted() -> Iterator[None]:
    token = _TRUSTED.set(True)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def evolve(options: _Options, **changes: Any) -> _Options:
    """``dataclasses.replace`` without the checks: for values derived from checked ones."""
    with _trusted():
        return dataclasses.replace(options, **changes)  # type: ignore[type-var]


class _Checked:
    """Base of the option objects: every field checked once, at construction."""

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = {}

    def __post_init__(self) -> None:
        if _TRUSTED.get():
            return
        for name, constraint in self._parameter_constraints.items():
            object.__setattr__(self, name, validate(name, getattr(self, name), constraint))
        self._check_together()

    def _check_together(self) -> None:
        """Rules between fields (none by default)."""

    @classmethod
    def pick(cls: type[_Options], arguments: Mapping[str, Any]) -> _Options:
        """The options named by this class's fields, taken from a call's arguments."""
        names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
        return cls(**{name: arguments[name] for name in names if name in arguments})


def split_settings(
    function: str, settings: Mapping[str, Any], *kinds: type[_Checked]
) -> tuple[Any, ...]:
    """A call's keyword settings as a :class:`PrivacyOptions` and options of ``kinds``.

    A name that no class declares is refused as Python refuses an unknown keyword.
    """
    classes: tuple[type[_Checked], ...] = (PrivacyOptions, *kinds)
    known = {f.name for cls in classes for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(settings) - known)
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    return tuple(cls.pick(settings) for cls in classes)


def release_options(arguments: Mapping[str, Any], *kinds: type[_Checked]) -> tuple[Any, ...]:
    """The option objects of a public release from its arguments (its ``locals()``).

    ``dropna=True``, the old spelling of ``missing="zero"``, is folded into
    ``missing`` first.
    """
    if arguments.get("dropna", False) is not False:
        arguments = {
            **arguments,
            "missing": check_missing(arguments["missing"], arguments["dropna"]),
        }
    classes: tuple[type[_Checked], ...] = (PrivacyOptions, *kinds)
    return tuple(cls.pick(arguments) for cls in classes)


def _check_scale_share(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type_name(value)}.")
    return check_real(value, name, low=0.0, high=1.0, low_open=True, high_open=True)


def _check_m(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer or None; got {type_name(value)} {value!r}.")
    return int(value)  # its range depends on n: the plan checks it


def check_k_option(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer or None; got {type_name(value)} {value!r}.")
    if int(value) < 1:
        raise refuse(name, "an integer in [1, p]", value)
    return int(value)  # the upper end is p: the plan checks it


def _check_progress(value: object, name: str) -> Any:
    resolve_progress(value)  # refuses what is not None, a bool or a callable
    return value


#: The share of the budget spent on private scales by default, chosen by
#: measurement: over shares 0.3 .. 0.7 on raw-unit tables (breast cancer and
#: wine at n = 500, diabetes at n = 2000; eps 1 and 2; 20 seeds each), 0.5
#: was best or within one seed in 20 of the best in five of the six cells.
SCALE_SHARE = 0.5

_SCALE_HINT = "Divide the data by public scales yourself (X / scales) to use known units."


@dataclass(frozen=True, eq=False)
class PrivacyOptions(_Checked):
    """The settings every private release shares, checked once when built.

    ``bounds`` are checked against the column names by the plan (the names
    come with the table); everything else is checked here.
    """

    eps: float
    delta: float
    calibration: str = "analytic"
    ties: str = "zero"
    bounds: Any = None
    accuracy: str = "warn"
    allow_large_delta: bool = False
    scale: str | None = None
    scale_share: float = SCALE_SHARE
    missing: str = "refuse"
    # the checked bounds per tuple of column names, shared by derived objects
    _boxes: dict[Any, Any] = field(default_factory=dict, repr=False)

    def box(self, names: tuple[str, ...]) -> Any:
        """``bounds`` checked against the column ``names``: None or (lower, upper) arrays.

        Checked once per set of names; objects derived with :func:`evolve`
        share the result while their ``bounds`` are the same object.
        """
        key = (id(self.bounds), tuple(names))  # the entry keeps the bounds, so the id stays
        if key not in self._boxes or self._boxes[key][0] is not self.bounds:
            self._boxes[key] = (self.bounds, check_bounds(self.bounds, names))
        return self._boxes[key][1]

    def with_checked_box(
        self, box: tuple[NDArray[np.float64], NDArray[np.float64]], names: tuple[str, ...]
    ) -> PrivacyOptions:
        """These options with ``bounds`` replaced by a box derived from checked ones.

        For public bounds moved to other units (divided by public scales):
        the derived ``(lower, upper)`` pair is recorded as checked against
        ``names``, so the plans that read it do not check it again.
        """
        bounds = np.column_stack(box)
        derived = evolve(self, bounds=bounds, _boxes={})
        derived._boxes[(id(bounds), tuple(names))] = (bounds, box)
        return derived

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = {
        "eps": Check(check_eps, (-1.0, math.nan, True, "1")),
        "delta": Check(check_delta, (0.0, 1.0, math.inf)),
        "calibration": Choice(("analytic", "classic")),
        "ties": Choice(("zero", "error")),
        "accuracy": Choice(("warn", "error", "ignore")),
        "allow_large_delta": Boolean(),
        "scale": Choice((None, "private"), hint=_SCALE_HINT),
        "scale_share": Check(_check_scale_share, (0.0, 1.0, math.nan, True)),
        "missing": Check(lambda value, name: check_missing(value), ("drop", 1)),
    }


#: The rows of the pair design in every table that has them (one check each).
DESIGN_CONSTRAINTS: Mapping[str, Constraint] = {
    "design": Choice((None, "exact", "balanced")),
    "m": Check(_check_m, (1.5, True)),
}


@dataclass(frozen=True, eq=False)
class DirectionsOptions(_Checked):
    """The settings of a direction release (and of the directions under a loading)."""

    k: int | None = None
    sensitivity: str = "tight"
    design: str | None = None
    m: int | None = None
    progress: Any = field(default=None)
    estimator: str = "kendall"

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = {
        "k": Check(check_k_option, (0, 1.5, True)),
        "sensitivity": Choice(("tight", "seed")),
        **DESIGN_CONSTRAINTS,
        "progress": Check(_check_progress, ("yes", 3)),
        "estimator": Choice(("kendall", "tau")),
    }


#: The direction settings of a release priced inside another (checked once, here).
DIRECTIONS_DEFAULTS = DirectionsOptions()


@dataclass(frozen=True, eq=False)
class DesignOptions(_Checked):
    """The pair design of the directions a release prices inside itself.

    For the releases whose directions are one part among others (scree,
    score, report, the PCA fit): ``design`` None is the rule of
    :func:`dppca.kernels.kendall.default_design`; ``m`` is checked against
    n by the directions' plan.
    """

    design: str | None = None
    m: int | None = None

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = DESIGN_CONSTRAINTS

    def directions(self, **changes: Any) -> DirectionsOptions:
        """The direction settings with this design (``changes`` are already checked)."""
        return evolve(DIRECTIONS_DEFAULTS, design=self.design, m=self.m, **changes)


#: The rule's design, for plans built without a design of their own.
DESIGN_DEFAULTS = DesignOptions()

#: The ``design`` paragraph of every release with directions (``%(design)s``).
DESIGN_PARAMETER = """\
Pairs averaged in the Kendall matrix: all of them, or the n m pairs of
a random balanced design (for very large n); see
:func:`dppca.spherical_kendall`. The privacy cost is the same. None:
exact up to ``n (n - 1) / 2 * p = 1e11`` (n = 100,000 at p = 20),
balanced above (:func:`dppca.kernels.kendall.default_design`, a rule
on the public n and p; its accuracy cost is measured by
``benchmarks/bench_design.py``); always exact for ``estimator="tau"``."""

#: The ``m`` paragraph that goes with it (``%(m)s``).
M_PARAMETER = """\
Partners per row of the balanced design, in [1, (n - 1) // 2]; default
``min(20, (n - 1) // 2)``."""


def document_design(func: Any) -> Any:
    """Fill ``%(design)s`` and ``%(m)s`` in ``func``'s docstring (one text for all)."""
    fill_docstring(func, "design", DESIGN_PARAMETER)
    return fill_docstring(func, "m", M_PARAMETER)


def check_components_option(value: object, name: str) -> tuple[int, int]:
    # the PCs must exist: the plan checks them against k once the shape is known
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(
            f"{name} must be a pair of PC numbers such as (1, 2); got {type_name(value)}."
        )
    return value  # type: ignore[return-value]


@dataclass(frozen=True, eq=False)
class LoadingOptions(_Checked):
    """The settings of a loading picture besides its directions'."""

    components: tuple[int, int] = (1, 2)
    compare: bool = False
    sign_reference: str = "private"

    _parameter_constraints: ClassVar[Mapping[str, Constraint]] = {
        "components": Check(check_components_option, ("12", 1)),
        "compare": Boolean(),
        "sign_reference": Choice(("private", "nonprivate")),
    }
