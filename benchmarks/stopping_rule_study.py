"""A study of stopping rules for the perceptrons on data that is not separable.

DESIGN NOTE (the recommendation; the figures are in the tables this script
prints)
=========================================================================

Recommended rule: "no improvement, certified". For each one-vs-rest
problem, at the end of every epoch (after the existing test: an epoch
without updates, the radius still, ends the run as "separated"):

- ``m`` = the sign mistakes of the epoch: the examples of positive weight
  with ``y f(x) <= 0`` when visited, before their update.
- ``count``: 0 when ``m == 0`` (never stop during an epoch without a sign
  mistake); else 0 when ``m`` is below the best ``m`` so far (which it then
  becomes); else ``count + 1``. When ``count`` is set to 0, keep a copy of
  the weights, ``w_r``, and of ``A`` (below).
- the drift ``D = min(||w_e - w_1|| / A(1, e), ||w_e - w_r|| / A(r, e)) / R``:
  ``w_k`` the lifted weights ``(coef, lift_coef)`` at the end of epoch
  ``k`` (``w_1`` after the first epoch, when the lift and the radius are
  fixed; ``w_r`` the copy above), ``A(s, e)`` the sum of
  ``eta0 * sample_weight`` over the updates of epochs ``s+1 .. e``, ``R``
  the largest lifted norm ``sqrt(max ||x||^2 + s^2)``. The kernel
  perceptron: ``||w_e - w_s||^2 = ||w_e||^2 - 2 sum_r c_s[r] f_e[r] +
  ||w_s||^2`` from the decision values it keeps, ``R^2 = max k(x, x)``.
- stop ("no_improvement") when ``count >= n_iter_no_change`` and
  ``D < tol``; otherwise go on (the count stays >= n_iter_no_change and the
  test is made again after the next epoch). Defaults ``tol=0.01``,
  ``n_iter_no_change=5``; ``tol=None`` turns the rule off (the papers'
  algorithms exactly). Measured in this script as rule "b mistakes tol=0
  n=5 delta=0.01 reset" ("r reset window" in the benchmark tables); the
  window over the last ``n_iter_no_change`` epochs instead of the one
  since the last reset ("r: b counts") is a valid certificate too, needs
  a ring of weights, and measured the same or slightly worse.

Returned weights: the averaged weights of a run stopped by the rule, the
last weights of a run that separated (its theorem's margin is theirs);
``average=True`` keeps returning the averaged weights in both cases. (A run
that separates has since moved toward its averaged weights as far as keeps
that margin: "Which function a run answers with" in the user guide.)

What it promises (a theorem, not a measurement): if a unit ``w*`` separates
the lifted training sample with margin ``eps*``, every update ``a y x``
(``a > 0``) adds at least ``a eps*`` to ``w . w*``, so
``||w_e - w_s|| >= eps* A(s, e)`` and ``D >= eps* / R``: the rule never
stops a run whose lifted sample has ``eps* > tol * R`` (at ``eps* = tol *
R`` exactly, rounding decides), for every
schedule, shuffle and ``n_iter_no_change``. The script checks it on every
stop of the separable study against the exact optimal margin
(skperc.metrics.optimal_margin). A run it stops has proved that no
separator of margin ``tol * R`` exists.

Measured (``--separable --seeds 3``: 576 shuffled separable samples, the
four schedules, with and without intercept, eps*/R 0.3 .. 0.01, R 0.1 ..
10, at most 3000 epochs): of the 376 runs that the papers' algorithms
separate within 1000 epochs, the rule stops 3 (0.8%) before they
separate: three samples generated with eps*/R = 0.01 = tol exactly, where
the late updates alternate between the two examples on the margin (their
``y x`` add up along ``w*``) and the drift equals eps*/R to 14 digits, the
boundary of the theorem, decided by rounding; none with a margin above
tol. Of all 576,
57 (9.9%), nearly all runs that do not separate within 3000 epochs
either. On the first group scikit-learn's rule (perceptron loss, tol=1e-3,
n_iter_no_change=5) stops 48%, the same rule on the sign mistakes 47%,
rule b (never during a mistake-free epoch) 19% and b with
n_iter_no_change=10 12%: the sign mistakes of a separable run of small
margin plateau at 1 or 2 an epoch for thousands of epochs, so no rule that
reads only the epoch losses can tell it from a stalled run. With
``tol=0.005`` the rule stops none of the 376 (22 of all 576) but waits
about five times longer on small noisy sets.

On the benchmark sets (``--benchmark``; the default ``beta=0``) it stops
after 7 epochs on the 100,000-row noisy set (the drift is about 2e-4 after
the second epoch) with the averaged weights at 0.846 accuracy against
Perceptron's 0.757 (last weights: 0.705); on breast cancer after 60
epochs (0.977 against 0.947) and on digits after 108 (0.935 against
0.931): small data sets are close to separable and the drift falls
slowly there, so the rule costs more epochs than scikit-learn's (108
against 22 on digits; ``tol=0.02`` stops after 26 but reaches only 0.919,
and stops 2.1% of the quickly separable runs). The last weights are the worst choice
everywhere (the intercept, lifted by R, jumps by R^2 at each update); the
pocket (best epoch on the training sign mistakes) is worse than the
average; early_stopping on a validation split was less accurate than the
averaged weights on every set (it trains on 90% and stops early). With
the margin thresholds ("scale", "power") on small noisy sets the weights
grow, the drift falls slowly, and the runs still go to max_iter (digits);
on the large noisy set they stop after 9 epochs.

What the script does
--------------------
It runs the perceptrons of skperc again in a small reimplementation
compiled with numba (``pip install numba``; a study tool, not a dependency
of skperc): the same updates, thresholds (``beta`` 0, a constant,
``"scale"``, ``"power"``), lifted intercept (``intercept_scaling="auto"``),
radius following and lazy averaging as ``skperc/_margin_perceptron_fast.pyx``
and ``skperc/_kernel_perceptron_fast.pyx``. ``--check`` shows that it gives
MarginPerceptron's weights to the last bit on unshuffled runs (its shuffles
draw other orders than skperc's, so shuffled runs are the same algorithm on
other orders). A run records, for every epoch, what a stopping rule may
read during the epoch (measured at each example before its update): the
sign mistakes ``y f(x) <= 0``, the updates, the perceptron loss
``max(0, -y f(x))``, and that loss divided by the norm of the weights (the
geometric loss, which does not grow with the weights); and the weights and
averaged weights at the end of the epoch. The rules are then applied to
these records: a rule does not change the run before it stops it, so one
run serves every rule and every choice of returned weights.

The rules, in scikit-learn's vocabulary (an epoch's loss is the mean over
its examples; ``best`` the smallest epoch loss so far):

- ``a``: scikit-learn's rule: an epoch whose loss is not below
  ``best - tol`` counts, any other resets the count; stop when the count
  reaches ``n_iter_no_change``.
- ``b``: the same, but an epoch with no sign mistake resets the count, so
  the rule never stops a run during its mistake-free epochs.
- ``c``: ``b`` with a relative tolerance, ``loss > best * (1 - tol)``
  counting, on the sign-mistake rate.
- ``v``: ``early_stopping``: a ``validation_fraction`` of the training data
  is held out (stratified), the loss is the error on it after each epoch.

Returned weights: the last weights, the averaged weights (``average=True``),
the averaged weights only when the rule stopped the run ("auto": a run that
separated returns its last weights, which carry the theorem), the pocket
(the end-of-epoch weights with the smallest epoch loss of the rule; since
the loss of an epoch is measured on weights that move during it, the pocket
takes the weights at the start of the best epoch), and the weights of the
best validation error (``early_stopping``).

Run from the repository root::

    python benchmarks/stopping_rule_study.py --check
    python benchmarks/stopping_rule_study.py --separable [--seeds 10]
    python benchmarks/stopping_rule_study.py --benchmark
    python benchmarks/stopping_rule_study.py --kernel
"""

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.linear_model import Perceptron, SGDClassifier
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from skperc import MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.metrics import optimal_margin

# bench_defaults.py, beside this script, makes the benchmark sets.
sys.path.insert(0, str(Path(__file__).parent))

CONSTANT, SCALE, POWER = 0, 1, 2
# The statistics of an epoch, in the columns of the records.
MISTAKES, UPDATES, PERCEPTRON_LOSS, GEOMETRIC_LOSS, RADIUS_CHANGED = range(5)
SCHEDULES = {"0": (CONSTANT, 0.0), "1.0": (CONSTANT, 1.0), "scale": (SCALE, 0.0)}
SCHEDULES["power"] = (POWER, 0.0)


@njit(cache=True)
def _power_step(t, alpha):
    if t == 1.0:
        return 0.0
    return 0.5 * (-(t**alpha) * np.expm1(alpha * np.log1p(-1.0 / t)) - 1.0)


@njit(cache=True)
def _threshold(kind, beta, alpha, t, rho2):
    if kind == CONSTANT:
        return beta
    if kind == SCALE:
        return rho2
    return rho2 * _power_step(float(t), alpha)


@njit(cache=True)
def _begin(n, kind, beta, alpha, seed):
    """The visiting order, the radius rule (0 none, 1 max, 2 double) and
    the first threshold of a run."""
    # numba compiles the legacy global generator only.
    np.random.seed(seed)  # noqa: NPY002
    radius_rule = 0 if kind == CONSTANT else (2 if kind == SCALE else 1)
    return np.arange(n), radius_rule, _threshold(kind, beta, alpha, 1, 0.0)


@njit(cache=True)
def _tally(margin, w_norm2, epoch_tally):
    """Count a visited example in [sign mistakes, perceptron loss,
    geometric loss], measured before its update."""
    if margin <= 0.0:
        epoch_tally[0] += 1
        epoch_tally[1] -= margin
        if w_norm2 > 0.0:
            epoch_tally[2] -= margin / np.sqrt(w_norm2)


@njit(cache=True)
def _record(stats, epoch, epoch_tally, epoch_updates, changed):
    stats[epoch, MISTAKES] = epoch_tally[0]
    stats[epoch, UPDATES] = epoch_updates
    stats[epoch, PERCEPTRON_LOSS] = epoch_tally[1]
    stats[epoch, GEOMETRIC_LOSS] = epoch_tally[2]
    stats[epoch, RADIUS_CHANGED] = changed
    epoch_tally[:] = 0.0


@njit(cache=True)
def linear_run(
    data, indices, indptr, n_features, y, kind, beta, alpha, lift_mode,
    max_iter, shuffle, seed, stats, coefs, avg_coefs,
):  # fmt: skip
    """One binary problem (y in {-1, +1}) over CSR rows; lift_mode 0 is no
    intercept, 2 the lift "auto". Fills stats[e] and the end-of-epoch
    weights coefs[e] and averaged weights avg_coefs[e] (the intercept last);
    returns the number of epochs run (it stops after an epoch without
    updates in which the radius held still)."""
    n = len(y)
    w = np.zeros(n_features)
    avg = np.zeros(n_features)
    wl = 0.0
    avgl = 0.0
    w_norm2 = 0.0
    max_norm2 = 0.0
    rho2 = 0.0
    lift = 0.0
    steps = 0
    updates = 0
    order, radius_rule, thr = _begin(n, kind, beta, alpha, seed)
    epoch_tally = np.zeros(3)
    for epoch in range(max_iter):
        if shuffle:
            np.random.shuffle(order)  # noqa: NPY002
        changed = False
        epoch_updates = 0
        for ii in range(n):
            i = order[ii]
            start, end = indptr[i], indptr[i + 1]
            if epoch == 0:
                nrm2 = 0.0
                for j in range(start, end):
                    nrm2 += data[j] * data[j]
                if nrm2 > max_norm2:
                    max_norm2 = nrm2
                    if lift_mode == 2:
                        lift = np.sqrt(max_norm2)
                norm2 = nrm2 + lift * lift
                if radius_rule != 0 and norm2 > rho2:
                    rho2 = 4.0 * norm2 if radius_rule == 2 else norm2
                    changed = True
                    thr = _threshold(kind, beta, alpha, updates + 1, rho2)
            dot = 0.0
            for j in range(start, end):
                dot += w[indices[j]] * data[j]
            f = dot + wl * lift if lift_mode != 0 else dot
            margin = y[i] * f
            steps += 1
            _tally(margin, w_norm2, epoch_tally)
            if margin <= thr:
                updates += 1
                epoch_updates += 1
                a = y[i]
                xnorm2 = 0.0
                for j in range(start, end):
                    w[indices[j]] += a * data[j]
                    xnorm2 += data[j] * data[j]
                wl += a * lift
                # ||w + a x||^2 with x lifted; exact enough for the loss.
                w_norm2 += 2.0 * a * f + xnorm2 + lift * lift
                b = a * (steps - 1)
                for j in range(start, end):
                    avg[indices[j]] += b * data[j]
                avgl += b * lift
                if kind == POWER:
                    thr = _threshold(kind, beta, alpha, updates + 1, rho2)
        _record(stats, epoch, epoch_tally, epoch_updates, changed)
        coefs[epoch, :n_features] = w
        coefs[epoch, n_features] = wl * lift
        avg_coefs[epoch, :n_features] = w - avg / steps
        avg_coefs[epoch, n_features] = (wl - avgl / steps) * lift
        if epoch_updates == 0 and not changed:
            return epoch + 1
    return max_iter


@njit(cache=True)
def kernel_run(gram, y, kind, beta, alpha, max_iter, seed, stats, coefs, avg_coefs):
    """The kernel perceptron on a Gram matrix, as linear_run; coefs[e] are
    the dual coefficients at the end of epoch e."""
    n = len(y)
    f = np.zeros(n)
    c = np.zeros(n)
    cavg = np.zeros(n)
    w_norm2 = 0.0
    rho2 = 0.0
    steps = 0
    updates = 0
    order, radius_rule, thr = _begin(n, kind, beta, alpha, seed)
    epoch_tally = np.zeros(3)
    for epoch in range(max_iter):
        np.random.shuffle(order)  # noqa: NPY002
        changed = False
        epoch_updates = 0
        for ii in range(n):
            i = order[ii]
            if epoch == 0 and radius_rule != 0 and gram[i, i] > rho2:
                rho2 = 4.0 * gram[i, i] if radius_rule == 2 else gram[i, i]
                changed = True
                thr = _threshold(kind, beta, alpha, updates + 1, rho2)
            margin = y[i] * f[i]
            steps += 1
            _tally(margin, w_norm2, epoch_tally)
            if margin <= thr:
                updates += 1
                epoch_updates += 1
                a = y[i]
                w_norm2 += 2.0 * a * f[i] + gram[i, i]
                c[i] += a
                cavg[i] += a * (steps - 1)
                for r in range(n):
                    f[r] += a * gram[i, r]
                if kind == POWER:
                    thr = _threshold(kind, beta, alpha, updates + 1, rho2)
        _record(stats, epoch, epoch_tally, epoch_updates, changed)
        coefs[epoch] = c
        avg_coefs[epoch] = c - cavg / steps
        if epoch_updates == 0 and not changed:
            return epoch + 1
    return max_iter


class Run:
    """The records of one binary run: stats (epochs x 5), the end-of-epoch
    weights and averaged weights, epochs run, whether it separated, and the
    time of the run."""

    def __init__(self, stats, coefs, avg_coefs, n_epochs, n_samples, seconds):
        self.gram = None  # set on kernel runs
        self.lift = 0.0  # the lifted coordinate s, 0 without intercept
        self.radius = 1.0  # the largest lifted norm R
        self.stats = stats[:n_epochs]
        self.coefs = coefs[:n_epochs]
        self.avg_coefs = avg_coefs[:n_epochs]
        self.n_epochs = n_epochs
        self.n_samples = n_samples
        self.seconds = seconds
        last = self.stats[-1]
        self.separated = bool(last[UPDATES] == 0 and last[RADIUS_CHANGED] == 0)

    def drift(self, t, s):
        """||w_t - w_s|| / (R * updates between), at the ends of epochs s < t
        (s >= 1, after the first epoch has fixed the lift): an upper bound on
        eps* / R of the lifted sample whenever it is separable."""
        n_updates = self.stats[s + 1 : t + 1, UPDATES].sum()
        if n_updates == 0:
            return np.inf
        if self.gram is not None:
            delta = self.coefs[t] - self.coefs[s]
            norm = np.sqrt(max(delta @ self.gram @ delta, 0.0))
        else:
            delta = self.coefs[t] - self.coefs[s]
            if self.lift > 0:
                delta[-1] /= self.lift
            norm = np.linalg.norm(delta)
        return norm / (self.radius * n_updates)

    def loss(self, name):
        """The loss of each epoch, a mean over its examples."""
        column = {
            "mistakes": MISTAKES,
            "updates": UPDATES,
            "perceptron": PERCEPTRON_LOSS,
            "geometric": GEOMETRIC_LOSS,
        }[name]
        return self.stats[:, column] / self.n_samples


def fit_linear(X, y, schedule="0", intercept=True, max_iter=1000, seed=0):
    """A binary linear run; y in {-1, +1}."""
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    kind, beta = SCHEDULES[schedule]
    n_features = X.shape[1]
    stats = np.zeros((max_iter, 5))
    coefs = np.zeros((max_iter, n_features + 1))
    avg_coefs = np.zeros((max_iter, n_features + 1))
    start = time.perf_counter()
    n_epochs = linear_run(
        X.data, X.indices, X.indptr, n_features, y.astype(np.float64), kind,
        beta, 1.3, 2 if intercept else 0, max_iter, True, seed, stats, coefs,
        avg_coefs,
    )  # fmt: skip
    run = Run(stats, coefs, avg_coefs, n_epochs, len(y), time.perf_counter() - start)
    max_norm = np.sqrt(X.multiply(X).sum(axis=1).max())
    run.lift = max_norm if intercept else 0.0
    run.radius = np.sqrt(max_norm**2 + run.lift**2)
    return run


def fit_kernel(gram, y, schedule="0", max_iter=100, seed=0):
    kind, beta = SCHEDULES[schedule]
    n = len(y)
    stats = np.zeros((max_iter, 5))
    coefs = np.zeros((max_iter, n))
    avg_coefs = np.zeros((max_iter, n))
    start = time.perf_counter()
    n_epochs = kernel_run(
        gram, y.astype(np.float64), kind, beta, 1.3, max_iter, seed, stats,
        coefs, avg_coefs,
    )  # fmt: skip
    run = Run(stats, coefs, avg_coefs, n_epochs, n, time.perf_counter() - start)
    run.gram = gram
    run.radius = np.sqrt(np.max(np.diag(gram)))
    return run


# The rules --------------------------------------------------------------


def stop_epoch(
    run, rule, loss="mistakes", tol=1e-3, n_iter_no_change=5, delta=None, window="last"
):
    """The number of epochs after which ``rule`` stops ``run``, or None when
    it does not stop it before the run ends. ``rule`` is "a", "b" or "c";
    with ``delta``, the rule also waits until the drift of the weights
    proves eps*/R < delta, over the whole run after the first epoch or over
    a window: the last n_iter_no_change epochs (``window="last"``) or the
    epochs since the count was last reset (``window="reset"``)."""
    losses = run.loss(loss)
    mistakes = run.stats[:, MISTAKES]
    best = np.inf
    count = 0
    reset = 0
    for epoch, value in enumerate(losses):
        if rule == "c":
            stalled = value > best * (1.0 - tol)
        else:
            stalled = value > best - tol
        count = count + 1 if stalled else 0
        best = min(best, value)
        if rule in "bc" and mistakes[epoch] == 0:
            count = 0
        if count == 0:
            reset = epoch
        # A separated run stops before the rule is asked.
        if run.separated and epoch + 1 == run.n_epochs:
            return None
        if count >= n_iter_no_change:
            if delta is None:
                return epoch + 1
            start = reset if window == "reset" else epoch - n_iter_no_change
            if (
                epoch >= 1
                and min(run.drift(epoch, 0), run.drift(epoch, max(start, 0))) < delta
            ):
                return epoch + 1
    return None


def validation_stop(errors, tol=1e-3, n_iter_no_change=5):
    """scikit-learn's early_stopping on validation errors (a loss)."""
    best = np.inf
    count = 0
    for epoch, value in enumerate(errors):
        count = count + 1 if value > best - tol else 0
        best = min(best, value)
        if count >= n_iter_no_change:
            return epoch + 1
    return len(errors)


def returned_weights(run, epochs, stopped, loss, choice):
    """The weights a run stopped after ``epochs`` returns under ``choice``."""
    last = epochs - 1
    if choice == "last":
        return run.coefs[last]
    if choice == "average":
        return run.avg_coefs[last]
    if choice == "auto":
        return run.avg_coefs[last] if stopped else run.coefs[last]
    if choice == "pocket":
        if not stopped:
            return run.coefs[last]
        best = int(np.argmin(run.loss(loss)[:epochs]))
        # the weights at the start of the best epoch
        return run.coefs[best - 1] if best > 0 else run.coefs[0]
    raise ValueError(choice)


# --check -----------------------------------------------------------------


def check():
    """The reimplementation gives MarginPerceptron's weights to the last bit
    on unshuffled runs."""
    from sklearn.datasets import make_classification

    X, y = make_classification(300, 8, flip_y=0.1, random_state=0)
    signs = np.where(y == 1, 1.0, -1.0)
    worst = 0.0
    for schedule, intercept, average in itertools.product(
        SCHEDULES, [False, True], [False, True]
    ):
        beta = {"0": 0.0, "1.0": 1.0}.get(schedule, schedule)
        reference = MarginPerceptron(
            beta=beta, fit_intercept=intercept, shuffle=False, max_iter=7,
            average=average, early_stopping=False,
        )  # fmt: skip
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference.fit(X, y)
        X_csr = sp.csr_matrix(X)
        kind, value = SCHEDULES[schedule]
        stats = np.zeros((7, 5))
        coefs = np.zeros((7, 9))
        avg_coefs = np.zeros((7, 9))
        linear_run(
            X_csr.data, X_csr.indices, X_csr.indptr, 8, signs, kind, value, 1.3,
            2 if intercept else 0, 7, False, 0, stats, coefs, avg_coefs,
        )  # fmt: skip
        ours = (avg_coefs if average else coefs)[-1]
        theirs = np.r_[reference.coef_[0], reference.intercept_]
        same = np.array_equal(ours, theirs)
        worst = max(worst, np.max(np.abs(ours - theirs)))
        print(
            f"beta={schedule:6} intercept={intercept!s:5} average={average!s:5} "
            f"updates {int(stats[:, UPDATES].sum())} vs "
            f"{int(reference.n_updates_[0])}: "
            f"{'same bits' if same else 'DIFFERENT'}"
        )
    print(f"largest difference {worst:.3g}")


# (i) separable samples -------------------------------------------------

# The rules compared: (rule, loss, tol, n_iter_no_change).
RULES = [
    ("a", "updates", 1e-3, 5),
    ("a", "perceptron", 1e-3, 5),
    ("a", "geometric", 1e-3, 5),
    ("a", "mistakes", 1e-3, 5),
    ("b", "perceptron", 1e-3, 5),
    ("b", "geometric", 1e-3, 5),
    ("b", "mistakes", 1e-3, 5),
    ("b", "mistakes", 1e-3, 10),
    ("b", "mistakes", 1e-4, 5),
    ("b", "geometric", 1e-4, 5),
    ("b", "geometric", 1e-3, 10),
    ("c", "mistakes", 1e-3, 5),
    ("c", "mistakes", 0.01, 5),
    ("c", "mistakes", 0.01, 10),
    ("b", "mistakes", 1e-3, 5, 0.05),
    ("b", "mistakes", 1e-3, 5, 0.02),
    ("b", "mistakes", 1e-3, 5, 0.01),
    ("b", "mistakes", 1e-3, 5, 0.005),
    ("b", "mistakes", 0.0, 5, 0.02),
    ("b", "mistakes", 0.0, 5, 0.01),
    ("b", "mistakes", 0.0, 10, 0.01),
    ("b", "mistakes", 0.0, 5, 0.01, "reset"),
    ("b", "mistakes", 0.0, 5, 0.005, "reset"),
]


def rule_name(rule):
    kind, loss, tol, n, *certificate = rule
    name = f"{kind} {loss} tol={tol:g} n={n}"
    if certificate:
        name += f" delta={certificate[0]:g}"
    return name + (f" {certificate[1]}" if len(certificate) > 1 else "")


def separable_samples(n_seeds):
    """(description, X, y, intercept) over schedules' grids of samples."""
    grid = itertools.product(
        [0.3, 0.1, 0.03, 0.01],  # eps* / R
        [0.1, 1.0, 10.0],  # R
        [(100, 5), (500, 50)],  # n_samples, n_features
        [False, True],  # intercept; with it, the sample is moved off the origin
        range(n_seeds),
    )
    for margin, radius, (n, d), intercept, seed in grid:
        X, y = make_margin_classification(
            n, d, margin * radius, radius, random_state=seed
        )
        if intercept:
            offset = np.random.RandomState(seed).standard_normal(d)
            X = X + 0.5 * radius * offset / np.linalg.norm(offset)
        yield (margin, radius, n, d, intercept, seed), X, y


_LIFTED_MARGINS = {}


def lifted_margin(description, run):
    """eps* / R of the sample of a separable run, lifted as the run lifts it."""
    if description not in _LIFTED_MARGINS:
        X, y = _SAMPLES[description[1:]]
        if run.lift > 0:
            X = np.hstack([X, np.full((len(X), 1), run.lift)])
        _LIFTED_MARGINS[description] = optimal_margin(X, y)[0] / run.radius
    return _LIFTED_MARGINS[description]


_SAMPLES = {}


def separable_study(n_seeds, max_iter=3000):
    """How often each rule stops a separable run before it separates."""
    runs = []
    start = time.perf_counter()
    for description, X, y in separable_samples(n_seeds):
        _SAMPLES[description] = X, y
        for schedule in SCHEDULES:
            run = fit_linear(
                X, y, schedule, description[4], max_iter, seed=description[-1]
            )
            runs.append(((schedule, *description), run))
    print(
        f"{len(runs)} separable runs in {time.perf_counter() - start:.0f} s "
        f"(at most {max_iter} epochs; eps*/R 0.3, 0.1, 0.03, 0.01; R 0.1, 1, "
        "10; 100 x 5 and 500 x 50; through the origin, and moved off it with "
        "an intercept; shuffled)"
    )
    unfinished = [d for d, r in runs if not r.separated]
    print(f"runs not separated within {max_iter} epochs: {len(unfinished)}")
    for schedule in SCHEDULES:
        mine = [r for d, r in runs if d[0] == schedule]
        epochs = [r.n_epochs for r in mine if r.separated]
        print(
            f"  beta={schedule:6} separated {len(epochs)}/{len(mine)}, "
            f"epochs median {np.median(epochs):.0f}, max {np.max(epochs)}"
        )
    quick = sum(1 for _, r in runs if r.separated and r.n_epochs <= 1000)
    print(
        f"\nstopped early: of all {len(runs)} runs, and of the {quick} that "
        "separate within 1000 epochs; by beta (0, 1.0, scale, power); the "
        "worst case (beta, eps*/R, R, n, d, intercept, seed: stopped at / "
        "separated at)"
    )
    print(
        f"{'rule':34} {'all':>6} {'rate':>7} {'<=1000':>6} {'rate':>7}  "
        f"{'by beta':22} worst case"
    )
    details = []
    for rule in RULES:
        stops = [(d, r, stop_epoch(r, *rule)) for d, r in runs]
        if len(rule) >= 5:
            # The rule's theorem: it never stops a run whose lifted sample has
            # eps*/R > delta (at equality, rounding decides). Checked on every
            # stop with the exact margin.
            for d, r, e in stops:
                if e is not None:
                    assert lifted_margin(d, r) <= rule[4] * (1 + 1e-9), (d, e)
        early = [(d, r, e) for d, r, e in stops if e is not None]
        by_schedule = [sum(d[0] == s for d, _, _ in early) for s in SCHEDULES]
        worst = ""
        if early:
            d, r, e = max(early, key=lambda item: item[1].n_epochs - item[2])
            end = r.n_epochs if r.separated else f">{max_iter}"
            worst = f"{d}: {e} / {end}"
        # The runs that the papers' algorithm separates within the default
        # max_iter: there the rule changes the outcome.
        quick = [(d, r) for d, r in runs if r.separated and r.n_epochs <= 1000]
        quick_early = sum(1 for d, r, e in early if r.separated and r.n_epochs <= 1000)
        listed = [
            f"{d}: {e} / {r.n_epochs} (lifted eps*/R {lifted_margin(d, r):.4f})"
            for d, r, e in early
            if r.separated and r.n_epochs <= 1000
        ]
        if listed and len(rule) >= 5:
            details.append((rule_name(rule), listed))
        print(
            f"{rule_name(rule):34} {len(early):>6} {len(early) / len(runs):7.2%} "
            f"{quick_early:>6} {quick_early / len(quick):7.2%}  "
            f"{str(by_schedule):22} {worst}"
        )
    print("\nThe runs separated within 1000 epochs that a certified rule stops:")
    for name, listed in details:
        print(f"  {name}:")
        for line in listed:
            print(f"    {line}")
    return runs


# (ii) and (iii) the benchmark sets ----------------------------------------

# The rules of the benchmark tables: (name, arguments of stop_epoch); the
# drift certificate alone is stop_epoch with n_iter_no_change=0.
BENCH_RULES = [
    ("a perceptron loss n=5 (sklearn)", ("a", "perceptron", 1e-3, 5)),
    ("a mistakes n=5", ("a", "mistakes", 1e-3, 5)),
    ("b mistakes n=5", ("b", "mistakes", 1e-3, 5)),
    ("b mistakes n=5 delta=0.02", ("b", "mistakes", 1e-3, 5, 0.02)),
    ("b mistakes n=5 delta=0.01", ("b", "mistakes", 1e-3, 5, 0.01)),
    ("b mistakes n=5 delta=0.005", ("b", "mistakes", 1e-3, 5, 0.005)),
    ("drift alone delta=0.01", ("b", "mistakes", np.inf, 0, 0.01)),
    ("r: b counts n=5 delta=0.02", ("b", "mistakes", 0.0, 5, 0.02)),
    ("r: b counts n=5 delta=0.01", ("b", "mistakes", 0.0, 5, 0.01)),
    ("r reset window delta=0.01", ("b", "mistakes", 0.0, 5, 0.01, "reset")),
]
CHOICES = ["last", "average", "auto", "pocket"]


def ovr_runs(fit, y, classes):
    """One run per one-vs-rest problem (one for two classes)."""
    problems = classes[1:] if len(classes) == 2 else classes
    return [fit(np.where(y == c, 1.0, -1.0)) for c in problems]


def predict(scores, classes):
    if len(classes) == 2:
        return classes[(scores[:, 0] >= 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]


def rule_outcome(runs, rule, scores_of, classes, y_test, cap):
    """Epochs of the fit (the largest over its problems), and the test
    accuracy of each choice of returned weights."""
    stops = [stop_epoch(r, *rule) for r in runs]
    epochs = [
        e if e is not None else r.n_epochs for r, e in zip(runs, stops, strict=True)
    ]
    accuracy = {}
    for choice in CHOICES:
        weights = [
            returned_weights(r, e, s is not None, rule[1], choice)
            for r, e, s in zip(runs, epochs, stops, strict=True)
        ]
        accuracy[choice] = np.mean(predict(scores_of(weights), classes) == y_test)
    fit_epochs = max(epochs)
    reason = (
        "rule"
        if any(s is not None for s in stops)
        else ("separated" if all(r.separated for r in runs) else "max_iter")
    )
    return fit_epochs, reason, accuracy


def median_time(make, X, y, repeat=3):
    import warnings

    times = []
    for _ in range(repeat):
        estimator = make()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            estimator.fit(X, y)
            times.append(time.perf_counter() - start)
    return float(np.median(times)), estimator


def print_outcomes(label, outcomes, reference):
    ref_time, ref_acc, ref_name = reference
    print(f"\n{label}: {ref_name} {ref_time:.3f} s, accuracy {ref_acc:.3f}")
    print(
        f"{'rule':32} {'epochs':>6} {'stop':>9} {'fit s':>7} {'ratio':>6}  "
        + " ".join(f"{c:>7}" for c in CHOICES)
    )
    for name, (epochs, reason, seconds, accuracy) in outcomes.items():
        print(
            f"{name:32} {epochs:>6} {reason:>9} {seconds:7.3f} "
            f"{seconds / ref_time:6.2f}  "
            + " ".join(f"{accuracy[c]:7.3f}" for c in CHOICES)
        )


def validation_outcome(fit, X, y, classes, X_test, y_test, intercept=True):
    """early_stopping: 10% of the training data held out (stratified)."""
    X_fit, X_val, y_fit, y_val = train_test_split(
        X, y, test_size=0.1, stratify=y, random_state=0
    )
    runs = ovr_runs(lambda signs: fit(X_fit, signs), y_fit, classes)
    problems = classes[1:] if len(classes) == 2 else classes
    epochs, last, averaged = [], [], []
    for run, c in zip(runs, problems, strict=True):
        signs = np.where(y_val == c, 1.0, -1.0)
        errors = [np.mean(signs * (X_val @ w[:-1] + w[-1]) <= 0) for w in run.coefs]
        stop = validation_stop(errors)
        best = int(np.argmin(errors[:stop]))
        epochs.append(stop)
        last.append(run.coefs[best])
        averaged.append(run.avg_coefs[best])
    accuracy = {}
    for choice, weights in [("last", last), ("average", averaged)]:
        W = np.array(weights)
        scores = X_test @ W[:, :-1].T + W[:, -1]
        accuracy[choice] = np.mean(predict(scores, classes) == y_test)
    return max(epochs), accuracy


def off_outcome(runs, scores_of, classes, y_test):
    """The papers' algorithm: no rule; last (or averaged) weights."""
    epochs = max(r.n_epochs for r in runs)
    reason = "separated" if all(r.separated for r in runs) else "max_iter"
    accuracy = {}
    for choice in CHOICES:
        weights = [
            r.avg_coefs[-1] if choice == "average" else r.coefs[-1] for r in runs
        ]
        accuracy[choice] = np.mean(predict(scores_of(weights), classes) == y_test)
    return epochs, reason, accuracy


def tabulate(runs, scores_of, classes, y_test, cap, time_of):
    """The outcome of every rule: epochs, why the fit ended, the fit time of
    the compiled estimator for that many epochs, and the accuracies."""
    times = {}
    outcomes = {}
    for label, rule in BENCH_RULES + [("off (tol=None)", None)]:
        if rule is None:
            epochs, reason, accuracy = off_outcome(runs, scores_of, classes, y_test)
        else:
            epochs, reason, accuracy = rule_outcome(
                runs, rule, scores_of, classes, y_test, cap
            )
        if epochs not in times:
            times[epochs] = time_of(epochs)
        outcomes[label] = (epochs, reason, times[epochs], accuracy)
    return outcomes


def linear_table(name, schedule, data, cap, reference):
    X_train, X_test, y_train, y_test = data
    classes = np.unique(y_train)
    runs = ovr_runs(
        lambda signs: fit_linear(X_train, signs, schedule, True, cap),
        y_train,
        classes,
    )

    def scores_of(weights):
        W = np.array(weights)
        return X_test @ W[:, :-1].T + W[:, -1]

    beta = {"0": 0.0, "1.0": 1.0}.get(schedule, schedule)

    def time_of(epochs):
        return median_time(
            lambda: MarginPerceptron(
                beta=beta, max_iter=epochs, early_stopping=False, random_state=0
            ),
            X_train,
            y_train,
        )[0]

    outcomes = tabulate(runs, scores_of, classes, y_test, cap, time_of)
    if not sp.issparse(X_train):
        epochs, accuracy = validation_outcome(
            lambda X, signs: fit_linear(X, signs, schedule, True, cap),
            X_train, y_train, classes, X_test, y_test,
        )  # fmt: skip
        accuracy.update(auto=accuracy["last"], pocket=np.nan)
        outcomes["v early_stopping (best val)"] = (
            epochs, "rule", time_of(epochs), accuracy,
        )  # fmt: skip
    print_outcomes(
        f"{name}, beta={schedule} (at most {cap} epochs)", outcomes, reference
    )


def benchmark_study(names=None, schedules=("0", "1.0", "scale", "power")):
    """(ii): MarginPerceptron's rules against Perceptron() on the sets of
    bench_defaults.py."""
    from bench_defaults import SETS, split

    for name in names or SETS:
        data = split(name)
        X_train, X_test, y_train, y_test = data
        cap = 1000 if X_train.shape[0] < 10_000 else 300
        ref_time, perceptron = median_time(
            lambda: Perceptron(random_state=0), X_train, y_train
        )
        sgd_time, sgd = median_time(
            lambda: SGDClassifier(loss="hinge", random_state=0), X_train, y_train
        )
        print(
            f"\n=== {name}: Perceptron() {perceptron.n_iter_} epochs "
            f"{ref_time:.3f} s acc {perceptron.score(X_test, y_test):.3f}; "
            f"SGDClassifier(hinge) {sgd.n_iter_} epochs {sgd_time:.3f} s acc "
            f"{sgd.score(X_test, y_test):.3f}"
        )
        reference = (ref_time, perceptron.score(X_test, y_test), "Perceptron()")
        # The margin thresholds on the large sets only with dense data: the
        # study's time goes to the default elsewhere.
        for schedule in schedules if not sp.issparse(X_train) else ("0",):
            linear_table(name, schedule, data, cap, reference)


def kernel_study(names=None, rows=5000):
    """(iii): KernelPerceptron (rbf, its defaults) against SVC(), on at most
    ``rows`` training and test rows of each set."""
    from bench_defaults import SETS, split

    for name in names or SETS:
        kernel_table(name, split(name), rows)


def kernel_table(name, data, rows):
    from skperc import KernelPerceptron

    X_train, X_test, y_train, y_test = data
    X_train, y_train = X_train[:rows], y_train[:rows]
    X_test, y_test = X_test[:rows], y_test[:rows]
    classes = np.unique(y_train)
    gamma = 1.0 / X_train.shape[1]
    gram = rbf_kernel(X_train, gamma=gamma)
    gram_test = rbf_kernel(X_test, X_train, gamma=gamma)
    ref_time, svc = median_time(lambda: SVC(random_state=0), X_train, y_train)
    runs = ovr_runs(lambda signs: fit_kernel(gram, signs), y_train, classes)

    def scores_of(weights):
        return gram_test @ np.array(weights).T

    def time_of(epochs):
        return median_time(
            lambda: KernelPerceptron(max_iter=epochs, random_state=0),
            X_train,
            y_train,
        )[0]

    print_outcomes(
        f"{name} ({len(y_train)} training rows), KernelPerceptron rbf",
        tabulate(runs, scores_of, classes, y_test, 100, time_of),
        (ref_time, svc.score(X_test, y_test), "SVC()"),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--separable", action="store_true")
    parser.add_argument("--benchmark", action="store_true")
    parser.add_argument("--kernel", action="store_true")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    if args.check:
        check()
    if args.separable:
        separable_study(args.seeds)
    if args.benchmark:
        benchmark_study()
    if args.kernel:
        kernel_study()


if __name__ == "__main__":
    main()
