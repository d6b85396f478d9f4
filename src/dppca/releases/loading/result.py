"""The result of a loading release: coordinates, tables and the comparison.

:class:`LoadingResult` wraps a :class:`~dppca.releases.directions.DirectionsResult`
(normally private) and, with ``compare=True``, the non-private directions,
with the signs matched for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ...core.data_checks import check_variable_names
from ...core.lazy import pandas as pd
from ...core.scalar_checks import check_choice
from ...core.types import LoadingKind, RandomStateLike, SignReference
from ...core.validation import check_components, check_pc_list
from ...privacy.cost import PrivacyCost
from ..directions.result import DirectionsResult
from ..protocol import ResultMixin, drawer
from .sensitivity import NoiseSensitivity, match_signs, reperturbed_directions

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..forecast import Forecast

__all__ = ["LoadingResult"]


@dataclass(frozen=True, eq=False, repr=False)
class LoadingResult(ResultMixin):
    """Loading coordinates of PC directions, ready to tabulate and plot.

    Attributes
    ----------
    directions : DirectionsResult
        The main directions, normally a private :func:`dp_pc_dir` release.
    components : tuple of (int, int) or None
        The default pair of PCs (numbered from 1) for coordinates and plots;
        None only when a single direction is available.
    nonprivate : DirectionsResult or None
        Ordinary sample-covariance directions for comparison (``compare=True``).
        Computed without noise: not private.
    sign_reference : {"private", "nonprivate"}
        In comparisons, which side keeps its signs; the other side's vectors are
        flipped, one by one, to point the same way. With ``"nonprivate"`` the
        displayed DP vectors carry one bit per PC of the non-private
        directions (their signs), so they are no longer private: their columns
        are named ``nonprivate_signs_PC1``, ... and their panel is titled as
        non-private (:attr:`main_private` is False).

    Notes
    -----
    ``private`` (computed) is True only when the object holds nothing but the
    release: with a non-private comparison inside, or non-private
    ``directions``, it is False, although the DP part on its own
    (``directions``, and the DP columns of the tables) keeps its (eps, delta)
    guarantee. ``cost``, ``eps``, ``delta``, ``n``, ``variables``, ``bounds``
    and ``forecast`` are those of ``directions``.

    Examples
    --------
    >>> from dppca import dp_loading
    >>> from dppca.datasets import load_wine
    >>> res = dp_loading(load_wine(), eps=1.0, delta=1e-6, random_state=0)
    >>> res
    LoadingResult(p=13, k=13, components=(1, 2), n=178, eps=1, delta=1e-06)
    >>> res.to_frame().shape
    (13, 2)
    >>> res.eps == res.directions.eps  # the plot is post-processing of the directions
    True
    """

    directions: DirectionsResult
    components: tuple[int, int] | None = (1, 2)
    nonprivate: DirectionsResult | None = None
    sign_reference: str = "private"

    def __post_init__(self) -> None:
        if not isinstance(self.directions, DirectionsResult):
            raise TypeError(
                "directions must be a DirectionsResult (from dp_pc_dir); "
                f"got {type(self.directions).__name__}."
            )
        k = self.directions.k
        if self.components is None:
            if k >= 2:
                raise ValueError("components may be None only when a single direction is kept.")
        else:
            object.__setattr__(self, "components", check_components(self.components, k))
        check_choice(self.sign_reference, "sign_reference", ("private", "nonprivate"))
        if self.nonprivate is not None:
            other = self.nonprivate
            if not isinstance(other, DirectionsResult) or other.private:
                raise TypeError("nonprivate must be a non-private DirectionsResult (pc_dir).")
            if other.variables != self.directions.variables or other.k != k:
                raise ValueError("nonprivate must have the same variables and k as directions.")

    @classmethod
    def from_directions(
        cls, directions: DirectionsResult, components: tuple[int, int] | None = None
    ) -> LoadingResult:
        """Wrap existing directions (private or not) without any new computation.

        ``components`` defaults to ``(1, 2)`` (None when only one direction is kept).
        """
        if components is None and isinstance(directions, DirectionsResult) and directions.k >= 2:
            components = (1, 2)
        return cls(directions=directions, components=components)

    # -- plain facts -------------------------------------------------------------------
    @property
    def variables(self) -> tuple[str, ...]:
        """Variable labels."""
        return self.directions.variables

    @property
    def p(self) -> int:
        """Number of variables."""
        return self.directions.p

    @property
    def k(self) -> int:
        """Number of directions available."""
        return self.directions.k

    @property
    def n(self) -> int:
        """Number of rows of the data (public)."""
        return self.directions.n

    @property
    def cost(self) -> PrivacyCost | None:
        """Privacy cost of the release (the comparison part costs nothing and is not private)."""
        return self.directions.cost

    @property
    def eps(self) -> float | None:
        """Epsilon of the release (None if the directions are not private)."""
        return self.directions.eps

    @property
    def delta(self) -> float | None:
        """Delta of the release (None if the directions are not private)."""
        return self.directions.delta

    @property
    def bounds(self) -> NDArray[np.float64] | None:
        """The public bounds the data were clipped to before the release, if any."""
        return self.directions.bounds

    @property
    def forecast(self) -> Forecast | None:
        """The data-free accuracy forecast of the direction release."""
        return self.directions.forecast

    def nonprivate_parts(self) -> tuple[str, ...]:
        """``"directions"`` if they are not private, ``"nonprivate"`` with a comparison."""
        parts = self.directions.nonprivate_parts()
        return parts + (("nonprivate",) if self.nonprivate is not None else ())

    @property
    def main_private(self) -> bool:
        """Whether the main vectors as displayed are private.

        False for non-private directions, and for private ones whose signs are
        taken from the non-private comparison (``sign_reference="nonprivate"``):
        flipping a column by the sign of its match in the non-private
        directions publishes that sign, one bit per PC about the data.
        """
        return self.directions.private and not (
            self.nonprivate is not None and self.sign_reference == "nonprivate"
        )

    @property
    def has_comparison(self) -> bool:
        """Whether a non-private comparison is included (``compare=True``)."""
        return self.nonprivate is not None

    # -- coordinates -------------------------------------------------------------------
    def display_vectors(self) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
        """Main and comparison direction matrices with the signs used for display.

        Without a comparison the main directions come back unchanged. With one,
        the side named by ``sign_reference`` is unchanged and each column of
        the other side is multiplied by +1 or -1 to match it (see
        :func:`match_signs`).
        """
        main = np.array(self.directions.directions)
        if self.nonprivate is None:
            return main, None
        other = np.array(self.nonprivate.directions)
        if self.sign_reference == "private":
            other *= match_signs(other, main)
        else:
            main *= match_signs(main, other)
        return main, other

    def _pc_pair(self, a: int | None, b: int | None) -> tuple[int, int]:
        if a is None and b is None:
            if self.components is None:
                raise ValueError("a loading plane needs two directions; this result keeps one.")
            return self.components
        return check_components((a, b), self.k)

    def _prefix(self) -> str:
        if not self.directions.private:
            return "nonprivate_"
        return "" if self.main_private else "nonprivate_signs_"

    def coordinates(self, a: int | None = None, b: int | None = None) -> pd.DataFrame:
        """Loading coordinates ``(v_ja, v_jb)``, one row per variable.

        Parameters
        ----------
        a, b : int, optional
            Two different PC numbers in ``1..k``; by default ``components``.

        Returns
        -------
        pandas.DataFrame
            Index: the variables. Columns ``PC{a}`` and ``PC{b}`` hold the
            entries of the private directions (named ``nonprivate_PC{a}`` ...
            if the main directions are not private, ``nonprivate_signs_PC{a}``
            ... if their signs come from the non-private comparison, which
            makes them non-private). With a comparison, the
            columns ``nonprivate_PC{a}`` and ``nonprivate_PC{b}`` follow; they
            are computed without noise and ``frame.attrs["nonprivate_columns"]``
            lists them.
        """
        a, b = self._pc_pair(a, b)
        main, other = self.display_vectors()
        cols = [a - 1, b - 1]
        prefix = self._prefix()
        frame = pd.DataFrame(
            main[:, cols], index=list(self.variables), columns=[f"{prefix}PC{a}", f"{prefix}PC{b}"]
        )
        nonprivate_cols = list(frame.columns) if prefix else []
        if other is not None:
            names = [f"nonprivate_PC{a}", f"nonprivate_PC{b}"]
            frame[names] = other[:, cols]
            nonprivate_cols += names
        frame.attrs["nonprivate_columns"] = nonprivate_cols
        return frame

    def heatmap_table(
        self,
        variables: list[str] | None = None,
        components: list[int] | None = None,
        *,
        source: SignReference = "private",
    ) -> pd.DataFrame:
        """Signed entries ``v_jl`` for the chosen variables (rows) and PCs (columns).

        Parameters
        ----------
        variables : list of str, optional
            Variable names in the order wanted; default all.
        components : list of int, optional
            PC numbers (from 1) in the order wanted; default all ``k``.
        source : {"private", "nonprivate"}, default="private"
            ``"nonprivate"`` returns the comparison directions (not private;
            needs ``compare=True``). Signs are the display signs.
        """
        source = check_choice(source, "source", ("private", "nonprivate"))
        main, other = self.display_vectors()
        if source == "nonprivate":
            if other is None:
                raise ValueError("no non-private comparison here; call dp_loading(compare=True).")
            matrix, prefix = other, "nonprivate_"
        else:
            matrix, prefix = main, self._prefix()
        names = (
            self.variables
            if variables is None
            else check_variable_names(variables, self.variables)
        )
        pcs = (
            tuple(range(1, self.k + 1))
            if components is None
            else check_pc_list(components, self.k)
        )
        rows = [self.variables.index(v) for v in names]
        return pd.DataFrame(
            matrix[np.ix_(rows, [c - 1 for c in pcs])],
            index=list(names),
            columns=[f"{prefix}PC{c}" for c in pcs],
        )

    def to_frame(self) -> pd.DataFrame:
        """The coordinates for the default pair of PCs (see :meth:`coordinates`)."""
        return self.coordinates()

    # -- noise sensitivity -------------------------------------------------------------
    def noise_sensitivity(
        self, draws: int = 200, *, random_state: RandomStateLike = None
    ) -> NoiseSensitivity:
        """Recompute the directions after adding fresh noise to the released matrix.

        Parameters
        ----------
        draws : int, default=200
            Number of re-perturbations B, in [1, 100000].
        random_state : None, int or numpy.random.Generator, default=None
            Source of the fresh noise. It does not protect anything (the
            input is public), but a fixed value makes the picture repeatable.
            The draws come from a stream derived apart from the release's
            noise (:func:`dppca.core.validation.post_processing_rng`), so even the
            release's own seed never re-draws the released noise.

        Returns
        -------
        NoiseSensitivity

        Notes
        -----
        Privacy: no cost. The released noisy matrix and its noise scale sigma
        are public, so adding more noise to them and decomposing again is
        post-processing. Each recomputed direction is turned (sign only)
        towards the released one, again post-processing.

        Directions are matched by position (PC1 with PC1, ...). Where two
        eigenvalues of the released matrix are within a few sigma of each other
        the order can swap between draws; the spread then also shows that the
        order of those PCs is not determined by the release.
        """
        return reperturbed_directions(self.directions, draws, random_state)

    # -- drawing -----------------------------------------------------------------------
    def plot(self, kind: LoadingKind = "vector", *, ax: Any = None, **kwargs: Any) -> Axes:
        """Draw a loading plot (no new privacy cost).

        Parameters
        ----------
        kind : {"vector", "point", "heatmap"}, default="vector"
            The display; see :func:`dppca.plotting.plot_loading`.
        ax : matplotlib Axes or pair of Axes, optional
            Where to draw; a new figure by default. A comparison draws two
            panels, so it takes a pair.
        **kwargs
            Passed to :func:`dppca.plotting.plot_loading`.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on; with a comparison, that of the first (DP)
            panel, the other panel being in ``ax.figure.axes``. Unlike
            :func:`~dppca.plotting.plot_loading`, which returns the Figure
            of a two-panel plot, every result's ``plot()`` returns an Axes.
        """
        return drawer(self)(self, kind=kind, ax=ax, **kwargs)

    def __repr__(self) -> str:
        head = f"LoadingResult(p={self.p}, k={self.k}, components={self.components}, n={self.n}"
        if self.cost is None:
            head += ", non-private"
        else:
            head += f", eps={self.eps:.4g}, delta={self.delta:.3g}"
        if self.nonprivate is not None:
            head += ", with non-private comparison"
        return head + ")"
