#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""Fitting an SVM on labelled cells, and the portable fitted model.

:func:`fit` trains scikit-learn on standardised cell centres and keeps only the
numbers needed to evaluate the decision function (scaler, weights or support
vectors), so a :class:`FittedModel` is small, fast to query, independent of the
scikit-learn version and serialisable to plain JSON. Label +1 is SLO-met and the
decision function is positive on the met side.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Any, Mapping, Sequence
import warnings

import numpy as np
from oslo_log import log as logging

from elastman.capacity.params import ModelParams
from elastman.capacity.params import MONOTONE_OFF
from elastman.capacity.params import MONOTONE_TOTAL

LOG = logging.getLogger(__name__)

SVM = 'svm'
ALL_MET = 'all_met'
ALL_VIOLATED = 'all_violated'
EMPTY = 'empty'
KINDS = (SVM, ALL_MET, ALL_VIOLATED, EMPTY)


@dataclasses.dataclass
class FittedModel:
    """A capacity model: a decision boundary, or what one class tells."""

    kind: str
    features: list[str]
    granularity: np.ndarray
    load_mask: np.ndarray                 # True where the ray scales the coordinate
    kernel: str = 'linear'
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None
    coef: np.ndarray | None = None        # linear weights (standardised space)
    intercept: float = 0.0
    support: np.ndarray | None = None     # support vectors (standardised space)
    dual: np.ndarray | None = None        # dual coefficients y_i * alpha_i
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0
    points: np.ndarray | None = None      # one-class models: the cell centres
    upper: np.ndarray | None = None       # per-dimension max of the training cells
    n_cells: int = 0
    n_met: int = 0
    train_accuracy: float = math.nan
    fitted_at: float = 0.0
    slo_metric: str = ''
    slo_threshold_ms: float = math.nan

    # -- evaluation ------------------------------------------------------

    def _std(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.scale

    def decision(self, x: np.ndarray) -> np.ndarray:
        """Decision values for rows of ``x`` (feature units); > 0 means met."""
        if self.kind != SVM:
            raise ValueError('a %s model has no decision function' % self.kind)
        z = self._std(np.atleast_2d(np.asarray(x, dtype=np.float64)))
        if self.kernel == 'linear':
            return z @ self.coef + self.intercept
        if self.kernel == 'rbf':
            d2 = ((z[:, None, :] - self.support[None, :, :]) ** 2).sum(axis=2)
            return np.exp(-self.gamma * d2) @ self.dual + self.intercept
        k = (self.gamma * (z @ self.support.T) + self.coef0) ** self.degree
        return k @ self.dual + self.intercept

    def gradient(self, x: Sequence[float]) -> np.ndarray:
        """Gradient of the decision function in standardised space at ``x``."""
        z = self._std(np.asarray(x, dtype=np.float64))
        if self.kernel == 'linear':
            return self.coef.copy()
        if self.kernel == 'rbf':
            diff = z[None, :] - self.support
            k = np.exp(-self.gamma * (diff ** 2).sum(axis=1))
            return (-2.0 * self.gamma * (self.dual * k)) @ diff
        base = self.gamma * (self.support @ z) + self.coef0
        return (self.dual * self.degree * base ** (self.degree - 1) * self.gamma) @ self.support

    def predict(self, x: np.ndarray) -> np.ndarray:
        """+1 (met) / -1 (violated) for rows of ``x``; one-class models answer
        their class, an empty model raises.
        """
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        if self.kind == SVM:
            return np.where(self.decision(x) >= 0, 1, -1)
        if self.kind == ALL_MET:
            return np.ones(len(x), dtype=int)
        if self.kind == ALL_VIOLATED:
            return -np.ones(len(x), dtype=int)
        raise ValueError('an empty model predicts nothing')

    @property
    def two_class(self) -> bool:
        return self.kind == SVM

    # -- serialisation ---------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = v.tolist()
            elif isinstance(v, float) and not math.isfinite(v):
                v = None
            out[f.name] = v
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> 'FittedModel':
        kw = dict(data)
        if kw.get('kind') not in KINDS:
            raise ValueError('unknown model kind %r' % kw.get('kind'))
        arrays = {'granularity': np.float64, 'load_mask': bool, 'mean': np.float64,
                  'scale': np.float64, 'coef': np.float64, 'support': np.float64,
                  'dual': np.float64, 'points': np.float64, 'upper': np.float64}
        for name, dtype in arrays.items():
            if kw.get(name) is not None:
                kw[name] = np.asarray(kw[name], dtype=dtype)
        for name in ('train_accuracy', 'slo_threshold_ms'):
            if kw.get(name) is None:
                kw[name] = math.nan
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in kw.items() if k in known})


def _monotone(z: np.ndarray, y: np.ndarray, weights: np.ndarray | None,
              coef: np.ndarray, intercept: float, load_mask: np.ndarray,
              scale: np.ndarray, how: str, classifier) -> tuple[np.ndarray, float]:
    """A linear boundary that meets the SLO less as any load grows.

    A positive weight on a load coordinate says that more of that load
    meets the SLO better. Cells that see one mix of reads and writes at
    each load level (a read share that rises with the load) can teach
    that, and a ray along another mix then crosses the boundary far beyond
    the truth. ``how`` says what takes the place of such a fit:

    * ``drop``: the coordinate is left out and the others are fitted again,
      until no load weight is positive (an active-set fit under the sign
      constraint); a coordinate left out weighs 0;
    * ``total``: the load coordinates are fitted as their sum, every
      request alike, so each weighs the same per request; where the sum
      does not meet the SLO less as it grows either, as ``drop``.
    """
    if not (load_mask & (coef > 0)).any():
        return coef, intercept
    if how == MONOTONE_TOTAL:
        # z * scale is the cell centre less the mean: the centred total
        total = (z[:, load_mask] * scale[load_mask]).sum(axis=1)
        spread = float(total.std()) or 1.0
        rest = ~load_mask
        clf = classifier()
        clf.fit(np.c_[total / spread, z[:, rest]], y, sample_weight=weights)
        fitted = np.asarray(clf.coef_, dtype=np.float64).ravel()
        if fitted[0] < 0:
            coef = np.zeros(len(coef))
            coef[load_mask] = fitted[0] / spread * scale[load_mask]
            coef[rest] = fitted[1:]
            return coef, float(np.ravel(clf.intercept_)[0])
        # the total does not separate the cells either: leave coordinates out
    keep = np.ones(len(coef), dtype=bool)
    while True:
        wrong = keep & load_mask & (coef > 0)
        if not wrong.any() or not (keep & load_mask & ~wrong).any():
            return coef, intercept
        keep &= ~wrong
        clf = classifier()
        clf.fit(z[:, keep], y, sample_weight=weights)
        coef = np.zeros(len(keep))
        coef[keep] = np.asarray(clf.coef_, dtype=np.float64).ravel()
        intercept = float(np.ravel(clf.intercept_)[0])


def training_fingerprint(x: np.ndarray, y: np.ndarray) -> str:
    """Identity of a training set: refitting the same set is skipped."""
    h = hashlib.blake2b(digest_size=16)
    order = np.lexsort(x.T[::-1]) if len(x) else np.zeros(0, dtype=int)
    h.update(np.ascontiguousarray(x[order]).tobytes())
    h.update(np.ascontiguousarray(y[order]).astype(np.int8).tobytes())
    return h.hexdigest()


def fit(x: np.ndarray, y: np.ndarray, params: ModelParams,
        load_mask: Sequence[bool], now: float = 0.0,
        weights: np.ndarray | None = None) -> FittedModel:
    """Fit a capacity model on cell centres ``x`` with labels ``y`` (+1/-1).

    A pure function of its arguments (picklable), so a worker may run it in a
    process pool.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=int)
    base = dict(features=list(params.features),
                granularity=np.asarray(params.granularity_vector()),
                load_mask=np.asarray(load_mask, dtype=bool),
                kernel=params.kernel, n_cells=len(y), n_met=int((y > 0).sum()),
                fitted_at=float(now), slo_metric=params.slo_metric,
                slo_threshold_ms=float(params.slo_threshold_ms))
    if len(y) == 0:
        return FittedModel(kind=EMPTY, **base)
    upper = x.max(axis=0)
    if (y > 0).all() or (y < 0).all():
        kind = ALL_MET if y[0] > 0 else ALL_VIOLATED
        return FittedModel(kind=kind, points=x.copy(), upper=upper, **base)

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    # a coordinate the cells share (cell centres a grid apart) varies by
    # rounding only: standardising by that would send a query a fraction of
    # a cell away to +-1e14 (say, an interference index of 0 against cells
    # centred at 0.05)
    scale[scale <= 1e-6 * base['granularity']] = 1.0
    z = (x - mean) / scale
    # scikit-learn (and the scipy.stats and pandas it loads) only where a
    # model is fitted: the actuator evaluates models and never needs it
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC
    from sklearn.svm import SVC

    weight = 'balanced' if params.balanced else None
    use_liblinear = params.kernel == 'linear' and params.solver in ('auto', 'liblinear')

    def classifier():
        if use_liblinear:
            return LinearSVC(C=params.svm_c, loss='hinge', dual=True,
                             class_weight=weight, intercept_scaling=10.0,
                             max_iter=20000, random_state=0)
        return SVC(C=params.svm_c, kernel=params.kernel, gamma=params.gamma,
                   class_weight=weight, cache_size=100, max_iter=10 ** 6)

    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        clf = classifier()
        clf.fit(z, y, sample_weight=weights)
        coef = None
        if params.kernel == 'linear':
            coef = np.asarray(clf.coef_, dtype=np.float64).ravel()
            intercept = float(np.ravel(clf.intercept_)[0])
            if params.monotone != MONOTONE_OFF:
                coef, intercept = _monotone(z, y, weights, coef, intercept,
                                            base['load_mask'], scale,
                                            params.monotone, classifier)
    model = FittedModel(kind=SVM, mean=mean, scale=scale, upper=upper, **base)
    # classes_ is [-1, 1]: a positive decision value means label +1 (met)
    if coef is not None:
        model.coef, model.intercept = coef, intercept
    else:
        model.support = np.asarray(clf.support_vectors_, dtype=np.float64)
        model.dual = np.asarray(clf.dual_coef_, dtype=np.float64).ravel()
        model.intercept = float(np.ravel(clf.intercept_)[0])
        model.gamma = float(clf._gamma)
        model.degree = int(clf.degree)
        model.coef0 = float(clf.coef0)
    model.train_accuracy = float((model.predict(x) == y).mean())
    return model
