"""Heavy dependencies imported on first use, so that ``import dppca`` starts fast.

``import dppca`` used to load pandas (and pyarrow through it), scipy.optimize
and scipy.linalg: about 0.8 CPU-seconds, most of a short command's time. A
module that needs one of them imports the stand-in from here instead::

    from .lazy import pandas as pd

and uses ``pd.DataFrame`` as before: the real module is imported at the first
attribute access (and is then an ordinary entry of ``sys.modules``). Type
checkers see the real modules (the ``TYPE_CHECKING`` branch below). To test
whether an object is a pandas object without importing pandas, use
:func:`is_dataframe` / :func:`is_series`: if pandas was never imported,
nothing can be a DataFrame.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any, TypeGuard

__all__ = [
    "LazyModule",
    "is_dataframe",
    "is_pandas_index",
    "is_series",
    "isotonic_regression",
    "lazy_attribute",
    "pandas",
    "scipy_linalg",
    "scipy_optimize",
    "scipy_special",
    "scipy_stats",
]


_FORWARDED = frozenset({"__version__", "__file__", "__path__", "__all__"})


class LazyModule(types.ModuleType):
    """A stand-in for module ``name`` that imports it at the first attribute access."""

    def __init__(self, name: str) -> None:
        super().__init__(name)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__") and attr not in _FORWARDED:
            raise AttributeError(attr)  # probes by copy, pickle, inspect do not import
        value = getattr(importlib.import_module(self.__name__), attr)
        setattr(self, attr, value)  # later accesses skip __getattr__
        return value

    def __repr__(self) -> str:
        loaded = "loaded" if self.__name__ in sys.modules else "not loaded yet"
        return f"<lazy module {self.__name__!r} ({loaded})>"


def lazy_attribute(module: str, name: str) -> Any:
    """A function that calls ``module.name``, importing ``module`` at the first call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{module}.{name}``, imported at the first call."
    return call


if TYPE_CHECKING:  # type checkers see the real modules
    import pandas
    from scipy import linalg as scipy_linalg
    from scipy import optimize as scipy_optimize
    from scipy import special as scipy_special
    from scipy import stats as scipy_stats
    from scipy.optimize import isotonic_regression
else:
    pandas = LazyModule("pandas")
    scipy_linalg = LazyModule("scipy.linalg")
    scipy_optimize = LazyModule("scipy.optimize")
    scipy_special = LazyModule("scipy.special")
    scipy_stats = LazyModule("scipy.stats")
    isotonic_regression = lazy_attribute("scipy.optimize", "isotonic_regression")


def _pandas_type(name: str) -> Any:
    module = sys.modules.get("pandas")
    return getattr(module, name, None) if module is not None else None


def is_dataframe(X: object) -> TypeGuard[pandas.DataFrame]:
    """``isinstance(X, pandas.DataFrame)``, without importing pandas."""
    kind = _pandas_type("DataFrame")
    return kind is not None and isinstance(X, kind)


def is_series(X: object) -> TypeGuard[pandas.Series]:
    """``isinstance(X, pandas.Series)``, without importing pandas."""
    kind = _pandas_type("Series")
    return kind is not None and isinstance(X, kind)


def is_pandas_index(X: object) -> bool:
    """``isinstance(X, pandas.Index)``, without importing pandas."""
    kind = _pandas_type("Index")
    return kind is not None and isinstance(X, kind)
