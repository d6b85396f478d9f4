"""The result of one private PCA: :class:`PCAResult` and its :class:`PCASummary`."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ...core.lazy import pandas as pd
from ...privacy.cost import PrivacyCost
from ..directions.result import DirectionsResult
from ..forecast import Forecast
from ..loading.result import LoadingResult
from ..protocol import ResultMixin
from ..score.result import ScoreResult
from ..scree.result import ScreeResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["ANALYSES", "PLOT_KINDS", "SCORE_LEFT_OUT", "PCAResult", "PCASummary"]

#: What a fit estimates: the standardised (correlation) PCA, the PCA of the
#: table in its own units, or the PCA of the table divided by public scales.
ANALYSES = ("standardized", "units", "scaled")

#: The pictures a fit draws: ``fit.plot(kind)``.
PLOT_KINDS = ("scree", "score", "loading", "variable", "biplot")
#: How the note of a score plot left out by the default rule (``score=None``) starts.
SCORE_LEFT_OUT = "no score plot"

# kind -> (module, function) of the pictures drawn from the whole fit.
_FIT_DRAWERS = {
    "scree": ("dppca.plotting._fit", "plot_fit_scree"),
    "score": ("dppca.plotting._fit", "plot_fit_score"),
    "loading": ("dppca.plotting._fit", "plot_fit_loading"),
    "variable": ("dppca.plotting.variables", "plot_correlation_circle"),
    "biplot": ("dppca.plotting.biplot", "plot_biplot"),
}

#: What each analysis estimates, in one sentence (plans and dry runs print it).
ESTIMATES = {
    "standardized": "the PCA of the standardised table (its correlation matrix), "
    "estimated from ranks without sample means or standard deviations; the same "
    "in any units of the columns",
    "units": "the PCA of the table in the units its columns are written in; it "
    "depends on the units of the columns (a column in larger units carries more weight)",
    "scaled": "the PCA of the table divided by the public scales given; it depends on "
    "those scales",
}


@dataclass(frozen=True)
class PCASummary:
    """The two tables of :meth:`PCAResult.summary`.

    Attributes
    ----------
    importance : pandas.DataFrame
        One row per estimated PC: ``variance`` (private), ``pve`` (share of
        the total variance) and ``cumulative_pve``.
    budget : pandas.DataFrame
        One row per part of the fit (and a ``total`` row): ``eps``, ``delta``
        and ``share`` (the part's weight in the basic split). The parts'
        eps compose tightly to the total, which is less than their sum.
    analysis : str
        What the fit estimates (see :data:`ESTIMATES`).
    header : str
        The fit's repr and privacy sentence.
    notes : tuple of str
        The fit's notes (:attr:`PCAResult.notes`), a score plot left out by
        the default rule among them.
    """

    importance: Any
    budget: Any
    analysis: str
    header: str = ""
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        with pd.option_context("display.float_format", "{:.4g}".format):
            text = (
                f"{self.header}\nanalysis: {self.analysis}\n\nImportance of components\n"
                f"{self.importance.to_string()}\n\nBudget\n{self.budget.to_string()}"
            )
        if self.notes:
            text += "\n\nNotes\n" + "\n".join(f"- {note}" for note in self.notes)
        return text


@dataclass(frozen=True, eq=False, repr=False)
class PCAResult(ResultMixin):
    """One private PCA of a table (:func:`dppca.dp_pca`): every picture from one fit.

    Attributes
    ----------
    analysis : {"standardized", "units", "scaled"}
        What the fit estimates, chosen before any data were read.
    directions : DirectionsResult
        The private directions (Kendall's tau for the standardised analysis,
        the spherical Kendall matrix otherwise).
    scree : ScreeResult
        The private variances along the released directions: for the
        standardised analysis computed from the direction release itself
        (method ``"sin-tau"``, no extra cost), otherwise a clipped scree
        release along the directions.
    score : ScoreResult or None
        The private score plot along ``components`` (None with ``score=False``).
    variances : ndarray of shape (k,)
        Private variances along the released directions, in the analysis'
        units (for the standardised analysis: ``v' R v`` with ``R`` the
        private correlation estimate; they add up to at most p).
    pve : ndarray of shape (k,)
        Each variance over the private total variance (p for the
        standardised analysis).
    correlation_matrix : ndarray of shape (p, p) or None
        The standardised analysis' private correlation estimate
        ``sin(pi tau / 2)``; None otherwise.
    n : int
        Rows (public).
    variables : tuple of str
        Column labels.
    components : tuple of (int, int)
        The PCs of the score plot, loading plot and biplot (1-based).
    cost : PrivacyCost
        The whole fit: exactly the eps and delta given.
    parts : mapping of str to PrivacyCost
        The cost of each part that spent (``scales``, ``directions``,
        ``scree``, ``score``); they compose tightly to ``cost``.
    split : mapping of str to float
        The basic split's share of each part (before the tight stretch).
    scales : ndarray of shape (p,) or None
        What the columns were divided by before the score plot (standardised
        analysis) or every part (``"scaled"``); None in units.
    scale_source : {"private", "public", "bounds"} or None
        Where ``scales`` came from.
    notes : tuple of str
        Warnings and remarks of the fit (negative eigenvalues clipped, a frame
        that disagrees with the released spread, ...), also issued as
        warnings; except the note of a score plot left out by the default
        rule (:attr:`score_note`), which is only recorded.
    forecast : Forecast or None
        The data-free forecast made before the fit.
    nonprivate_variances, nonprivate_pve : ndarray or None
        With ``compare=True``: the matching non-private analysis' top
        eigenvalues and their proportions (the sample correlation matrix for
        the standardised analysis). Not private.
    nonprivate_directions : ndarray of shape (p, k) or None
        With ``compare=True``: the matching non-private analysis' directions.

    Examples
    --------
    >>> from dppca import dp_pca
    >>> from dppca.datasets import load_wine
    >>> fit = dp_pca(load_wine(), eps=1.0, delta=1e-6, random_state=0)
    >>> fit
    PCAResult(analysis='standardized', p=13, k=13, n=178, eps=1, delta=1e-06)
    >>> fit.to_frame().columns.tolist()
    ['variance', 'pve', 'cumulative_pve']
    >>> ax = fit.plot("loading")  # every picture reuses the fit's releases
    """

    analysis: str
    directions: DirectionsResult
    scree: ScreeResult
    score: ScoreResult | None
    variances: NDArray[np.float64]
    pve: NDArray[np.float64]
    correlation_matrix: NDArray[np.float64] | None
    n: int
    variables: tuple[str, ...]
    components: tuple[int, int]
    cost: PrivacyCost
    parts: Mapping[str, PrivacyCost]
    split: Mapping[str, float]
    scales: NDArray[np.float64] | None = None
    scale_source: str | None = None
    notes: tuple[str, ...] = ()
    forecast: Forecast | None = None
    nonprivate_variances: NDArray[np.float64] | None = None
    nonprivate_pve: NDArray[np.float64] | None = None
    nonprivate_directions: NDArray[np.float64] | None = None
    frame_ratio: NDArray[np.float64] | None = field(default=None)

    def __post_init__(self) -> None:
        if self.analysis not in ANALYSES:
            raise ValueError(f"analysis must be one of {ANALYSES!r}; got {self.analysis!r}.")
        object.__setattr__(self, "parts", MappingProxyType(dict(self.parts)))
        object.__setattr__(self, "split", MappingProxyType(dict(self.split)))
        for name in (
            "variances",
            "pve",
            "correlation_matrix",
            "scales",
            "nonprivate_variances",
            "nonprivate_pve",
            "nonprivate_directions",
            "frame_ratio",
        ):
            value = getattr(self, name)
            if value is not None:
                value.setflags(write=False)

    # ------------------------------------------------------------------ facts

    @property
    def p(self) -> int:
        """Number of columns."""
        return len(self.variables)

    @property
    def k(self) -> int:
        """Number of PCs with a private variance."""
        return int(np.asarray(self.variances).shape[0])

    @property
    def eps(self) -> float:
        """Epsilon of the whole fit."""
        return self.cost.eps

    @property
    def delta(self) -> float:
        """Delta of the whole fit."""
        return self.cost.delta

    @property
    def estimates(self) -> str:
        """What the analysis estimates, in one sentence."""
        return ESTIMATES[self.analysis]

    @property
    def loading(self) -> LoadingResult:
        """The loading plot's result: the fit's directions on its ``components``."""
        return LoadingResult(directions=self.directions, components=self.components)

    @property
    def pc_labels(self) -> tuple[str, ...]:
        """``PC1 .. PCk``."""
        return tuple(f"PC{i + 1}" for i in range(self.k))

    @property
    def has_comparison(self) -> bool:
        """Whether a non-private comparison (``compare=True``) is attached."""
        return bool(self.nonprivate_parts())

    def nonprivate_parts(self) -> tuple[str, ...]:
        """The non-private fields present, here and in the parts' results."""
        own = tuple(
            name
            for name in ("nonprivate_variances", "nonprivate_pve", "nonprivate_directions")
            if getattr(self, name) is not None
        )
        inner = tuple(
            f"{name}.{part}"
            for name, result in (("scree", self.scree), ("score", self.score))
            if result is not None
            for part in result.nonprivate_parts()
        )
        return own + inner

    def without_nonprivate(self) -> PCAResult:
        """The fit without its non-private comparison (what may be published)."""
        import dataclasses

        scree = dataclasses.replace(self.scree, nonprivate_values=None, nonprivate_trace=None)
        score = None if self.score is None else dataclasses.replace(self.score, nonprivate=None)
        return dataclasses.replace(
            self,
            scree=scree,
            score=score,
            nonprivate_variances=None,
            nonprivate_pve=None,
            nonprivate_directions=None,
        )

    # ------------------------------------------------------------------ tables

    def to_frame(self) -> pd.DataFrame:
        """The importance table: PCs as index, ``variance``, ``pve``, ``cumulative_pve``.

        With a comparison, ``*_nonprivate`` columns follow.
        """
        pve = np.asarray(self.pve, dtype=np.float64)
        columns: dict[str, Any] = {
            "variance": np.array(self.variances),
            "pve": pve,
            "cumulative_pve": np.cumsum(pve),
        }
        if self.nonprivate_variances is not None and self.nonprivate_pve is not None:
            columns["variance_nonprivate"] = np.array(self.nonprivate_variances)
            columns["pve_nonprivate"] = np.array(self.nonprivate_pve)
            columns["cumulative_pve_nonprivate"] = np.cumsum(self.nonprivate_pve)
        return pd.DataFrame(columns, index=list(self.pc_labels))

    def budget_frame(self) -> pd.DataFrame:
        """One row per part that spent and a ``total`` row: ``eps``, ``delta``, ``share``."""
        # the score part holds the frame's centres and the histogram
        shares = dict(self.split)
        shares["score"] = shares.get("score", 0.0) + shares.pop("frame", 0.0)
        rows = {
            name: {"eps": cost.eps, "delta": cost.delta, "share": float(shares.get(name, 0.0))}
            for name, cost in self.parts.items()
        }
        rows["total"] = {"eps": self.cost.eps, "delta": self.cost.delta, "share": 1.0}
        return pd.DataFrame.from_dict(rows, orient="index")

    def summary(self) -> PCASummary:
        """The importance table and the budget table (R's ``summary(fit)``)."""
        return PCASummary(
            importance=self.to_frame(),
            budget=self.budget_frame(),
            analysis=f"{self.analysis}: {self.estimates}",
            header=f"{self!r}\n{self.privacy_sentence()}",
            notes=self.notes,
        )

    @property
    def score_note(self) -> str | None:
        """Why the default rule left the score plot out, or None when it did not."""
        return next((n for n in self.notes if n.startswith(SCORE_LEFT_OUT)), None)

    # ------------------------------------------------------------------ pictures

    def plot(self, kind: str = "scree", *, ax: Any = None, **kwargs: Any) -> Axes:
        """Draw one picture of the fit from its stored estimates (no new privacy cost).

        Parameters
        ----------
        kind : {"scree", "score", "loading", "variable", "biplot"}, default="scree"
            The scree (its ``plot``'s default kind, the PVE of the total),
            the score plot, the loading plot of ``components``, the
            correlation circle, or the biplot.
        ax : matplotlib Axes, optional
            Where to draw; a new figure by default.
        **kwargs
            Passed to the picture's drawing function.

        Returns
        -------
        matplotlib.axes.Axes
        """
        if kind == "score" and self.score is None and self.score_note is None:
            raise ValueError(
                "this fit has no score plot (dp_pca(..., score=False)); fit with score=True."
            )
        if kind in _FIT_DRAWERS:
            module, name = _FIT_DRAWERS[kind]
            try:
                function = getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError):
                raise NotImplementedError(
                    f"the {kind!r} picture needs {module}.{name}, which this installation "
                    "does not have yet."
                ) from None
            return function(self, ax=ax, **kwargs)
        raise ValueError(f"kind must be one of {PLOT_KINDS!r}; got {kind!r}.")

    def __repr__(self) -> str:
        text = (
            f"PCAResult(analysis={self.analysis!r}, p={self.p}, k={self.k}, n={self.n}, "
            f"eps={self.eps:g}, delta={self.delta:g}"
        )
        if self.has_comparison:
            text += ", with non-private comparison"
        return text + ")"
