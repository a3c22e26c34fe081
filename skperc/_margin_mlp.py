"""MarginMLPClassifier: a ReLU network trained with the margin loss."""

import copy
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.extmath import row_norms, safe_sparse_dot
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    check_is_fitted,
    validate_data,
)

from ._atomic import atomic_fit, consistent_read
from ._base import (
    ScheduleParamsMixin,
    blocks_in_working_memory,
    check_finite_scores,
    check_sparse_structure,
    checked_partial_fit_codes,
    fit_labels,
)
from ._compat import (
    AdamOptimizer,
    Interval,
    Options,
    SGDOptimizer,
    StrOptions,
    _check_sample_weight,
    _fit_context,
)
from ._doc_link import DocLinkMixin
from ._docs import fill_doc
from ._early_stopping import check_validation_split, predicted_codes
from ._nonfinite import raise_non_finite
from .schedules import (
    ConstantThreshold,
    SublinearThreshold,
    ThresholdSchedule,
    _checked,
)

_VALIDATION = dict(accept_sparse="csr", dtype=[np.float64, np.float32])

# A run stopped by an overflow leaves the model it started from.
_REMEDY = "or lower learning_rate_init"


@fill_doc
class MarginMLPClassifier(
    DocLinkMixin, ScheduleParamsMixin, ClassifierMixin, BaseEstimator
):
    """A ReLU network whose output units learn with the margin loss.

    The network of Section 3 of "On the Perceptron's Compression": hidden
    layers of rectified linear units ``G(x)`` and one linear output unit
    ``o_k(x) = w_k . G(x) + b_k`` per class, trained one-vs-rest. Output
    unit ``k`` has the loss ``ReLU(beta_t - y_k o_k(x))`` with ``y_k = +1``
    on the examples of class ``k`` and ``-1`` on the others: it is zero
    when the unit classifies ``x`` correctly with a margin of at least
    ``beta_t``, and linear in ``G(x)`` otherwise. ``beta = 0`` makes every
    output unit a perceptron, ``beta = 1`` gives the hinge loss, and
    ``beta = "sublinear"`` lets the threshold grow with the number of
    updates as ``t^(1 - c)``. The network is trained by mini-batch gradient
    descent with back-propagation. With ``hidden_beta``, each hidden unit
    also has a threshold of its own that follows its own updates (the
    "internal clocks" of the end of Section 3).

    Read more in the :ref:`User Guide <margin_mlp>`.

    Parameters
    ----------
    hidden_layer_sizes : array-like of shape (n_layers - 2,) or int, \
            default=(300,)
        The number of units of each hidden layer. The paper uses one hidden
        layer of 800 or 300 units.

    beta : float, "sublinear" or ThresholdSchedule, default=1.0
        The margin ``beta_t`` the loss asks of every output unit.

        - a float ``>= 0``: a fixed margin; ``0`` is the perceptron's loss,
          ``1`` the hinge loss.
        - ``"sublinear"``: ``beta_t = t^(1 - c)``, where ``t`` is the number
          of updates (gradient steps) made so far: the
          :class:`~skperc.schedules.SublinearThreshold` of Section 3.
        - ``"power"``: the same, deprecated: in the perceptrons
          ``beta="power"`` is the infinity-perceptron's
          :class:`~skperc.schedules.PowerThreshold`, another schedule. It
          warns with a ``FutureWarning``; use ``"sublinear"``.
        - a :class:`~skperc.schedules.ThresholdSchedule`: any schedule of
          :mod:`skperc.schedules`. It is asked for
          ``threshold(t + 1, rho)`` before the ``(t + 1)``-th update, where
          ``rho`` follows the norms ``||G(x)||`` of the last hidden layer
          on the batches seen so far by the schedule's ``radius_rule``
          (the largest, or the doubling rule of Algorithm 3; ``0`` for
          ``"none"``): the output units are perceptrons on ``G(x)``.

    c : float, default=0.5
        The exponent of ``beta="sublinear"``, in the open interval (0, 1);
        it is not used by the other thresholds. A smaller ``c`` makes the
        margin grow faster.

    hidden_beta : ThresholdSchedule or None, default=None
        The internal clocks of the hidden units. With a schedule, hidden
        unit ``j`` computes ``ReLU(z_j(x) - beta_j)``, its input ``z_j(x) =
        v_j . a(x) + c_j`` (``a(x)`` the output of the layer below)
        translated by its own threshold ``beta_j = threshold(tau_j + 1,
        rho)``, where ``tau_j`` counts the updates of unit ``j`` so far and
        ``rho`` follows the norms ``||a(x)||`` of the batches seen by the
        schedule's ``radius_rule``, one ``rho`` per layer. An *update of a
        hidden unit* is a gradient step in which some example of the batch,
        of positive weight, reaches the unit active (``z_j(x) > beta_j``)
        with a nonzero error back-propagated to it: exactly the steps in
        which an example contributes to the gradient of the unit's incoming
        weights. A unit that grows older with a threshold that grows is
        active on fewer examples, and changes less. ``None`` translates no
        hidden unit.

    solver : {"adam", "sgd"}, default="adam"
        The gradient descent method, with the meaning it has in
        :class:`~sklearn.neural_network.MLPClassifier`: ``"adam"`` is Adam
        (``beta_1``, ``beta_2``, ``epsilon``), ``"sgd"`` is stochastic
        gradient descent (``learning_rate``, ``momentum``,
        ``nesterovs_momentum``).

    alpha : float, default=0.0
        The strength of the L2 penalty on the weights (not the intercepts),
        with the meaning it has in
        :class:`~sklearn.neural_network.MLPClassifier`: the loss of a batch
        gains ``0.5 * alpha * ||W||^2`` divided by the batch's number of
        examples (the sum of their ``sample_weight``), ``||W||^2`` the sum
        of the squares of every layer's weights, so that each step also
        shrinks the weights toward zero. ``0`` is the paper's network,
        which has no penalty. On noisy data the network without it learns
        the noise, as MLPClassifier does with its default of 1e-4: see
        :ref:`mlp_penalty`, where a penalty chosen by a grid search gained
        0.6 to 9 points. Not the ``alpha`` of :class:`MarginPerceptron`, an
        exponent of its thresholds.

    learning_rate : {"constant", "invscaling", "adaptive"}, default="constant"
        The step size of ``solver="sgd"`` over the epochs, as in
        :class:`~sklearn.neural_network.MLPClassifier`: ``"constant"`` keeps
        ``learning_rate_init``; ``"invscaling"`` takes
        ``learning_rate_init / (t + 1) ** power_t`` after each epoch, ``t``
        the number of examples seen (``t_``); ``"adaptive"`` divides it by 5
        each time the stopping rule (``tol``, ``n_iter_no_change``) would
        end the run, which then ends only once the step is at most 1e-6, or
        after ``max_iter`` epochs. Used only with ``solver="sgd"``.

    learning_rate_init : float, default=0.001
        The step size at the start of training.

    power_t : float, default=0.5
        The exponent of ``learning_rate="invscaling"``, ``>= 0``. Used only
        with ``solver="sgd"``.

    momentum : float, default=0.9
        The momentum of ``solver="sgd"``, in [0, 1]. ``0`` is plain
        gradient descent, as in the paper.

    nesterovs_momentum : bool, default=True
        Whether the momentum of ``solver="sgd"`` is Nesterov's (the step
        looks ahead along the velocity) rather than the classical one. Used
        only with ``solver="sgd"`` and ``momentum > 0``.

    batch_size : int, default=128
        The number of examples of each mini-batch (of the whole training set
        when it has fewer).

    max_iter : int, default=200
        The largest number of epochs (passes over the training data) of
        :meth:`fit`. Reaching it before the stopping rule is met raises a
        :class:`~sklearn.exceptions.ConvergenceWarning`.

    shuffle : bool, default=True
        Whether to shuffle the training data before each epoch.

    random_state : int, RandomState instance or None, default=None
        The seed of the initial weights, of the shuffling and of the
        validation split. Pass an int for reproducible output across
        multiple function calls.

    tol : float, default=1e-4
        Training stops when the training loss (or, with
        ``early_stopping=True``, the validation accuracy) has not improved by
        at least ``tol`` for more than ``n_iter_no_change`` epochs in a row. The
        training loss is watched only with a constant ``beta``: with a
        threshold that changes over time (``"sublinear"``, or a schedule other
        than :class:`~skperc.schedules.ConstantThreshold`), the losses of two
        epochs are measured against different margins, so without early
        stopping the run makes its ``max_iter`` epochs, and no
        :class:`~sklearn.exceptions.ConvergenceWarning`.

    early_stopping : bool, default=False
        Whether to set aside ``validation_fraction`` of the training data
        (stratified), stop when its accuracy stops improving, and keep the
        weights of the epoch with the best validation accuracy. Recommended
        with a margin that grows (``beta="sublinear"``): the training loss then
        measures the network against a target that moves, and need not
        decrease. A sample too small to put every class on both sides of
        the split raises a ``ValueError`` before any training.

    validation_fraction : float, default=0.1
        The share of the training data set aside for early stopping, in the
        open interval (0, 1). Used only when ``early_stopping=True``.

    beta_1 : float, default=0.9
        The decay rate of Adam's first moment estimates (the mean of the
        gradients), in [0, 1). Used only with ``solver="adam"``. Not a
        threshold: the margin is ``beta``.

    beta_2 : float, default=0.999
        The decay rate of Adam's second moment estimates (the mean of the
        squared gradients), in [0, 1). Used only with ``solver="adam"``.

    epsilon : float, default=1e-8
        The term that keeps Adam's division by the root of its second
        moments finite, ``> 0``. Used only with ``solver="adam"``.

    n_iter_no_change : int, default=10
        Training stops at the first epoch that ends more than
        ``n_iter_no_change`` consecutive epochs without an improvement of at
        least ``tol`` (as in :class:`~sklearn.neural_network.MLPClassifier`).

    warm_start : bool, default=False
        Whether :meth:`fit` continues from the weights of the previous call
        (with a new optimizer state) instead of initializing new ones. The
        classes and the number of features must not change.

    verbose : int, default=0
        Print the loss after each epoch when ``> 0``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.

    coefs_ : list of ndarray
        ``coefs_[i]`` is the weight matrix from layer ``i`` to layer
        ``i + 1``, of the dtype of the training data.

    hidden_n_updates_ : list of ndarray or None
        With ``hidden_beta``, ``hidden_n_updates_[i][j]`` is the number of
        updates of unit ``j`` of hidden layer ``i``, its clock ``tau_j``;
        ``None`` without.

    hidden_thresholds_ : list of ndarray or None
        With ``hidden_beta``, the translation ``beta_j`` of each hidden unit
        at the last gradient step, which :meth:`predict` uses; ``None``
        without.

    intercepts_ : list of ndarray
        ``intercepts_[i]`` is the intercept vector of layer ``i + 1``.

    loss_ : float
        The mean loss of the last epoch, with the margin of each update: the
        losses of its examples and the penalty of each batch (``alpha``),
        over its number of examples (weighted).

    loss_curve_ : list of float
        ``loss_`` after each epoch.

    best_loss_ : float or None
        The smallest ``loss_`` so far; ``None`` with ``early_stopping=True``
        or with a threshold that changes over time.

    validation_scores_ : list of float or None
        The accuracy on the validation set after each epoch; ``None``
        without early stopping.

    best_validation_score_ : float or None
        The best of ``validation_scores_``; ``None`` without early stopping.

    n_iter_ : int
        The number of epochs run by the last call to :meth:`fit` (1 after
        :meth:`partial_fit`).

    t_ : int
        The number of training examples the solver has seen.

    n_updates_ : int
        The number of gradient steps made: the ``t`` of
        ``beta="sublinear"``.

    n_layers_ : int
        The number of layers, input and output included.

    n_outputs_ : int
        The number of output units: 1 for a binary problem, else
        ``n_classes``.

    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.neural_network.MLPClassifier : The same network trained with the
        cross-entropy loss.
    MarginPerceptron : The margin perceptrons, whose thresholds the loss
        takes over.
    skperc.schedules : The thresholds, and the base class for new ones.

    Notes
    -----
    The loss of a batch is the mean over its examples (weighted by
    ``sample_weight``) of the sum over the output units of
    ``ReLU(beta_t - y_k o_k(x))``, plus the penalty of ``alpha``. Its
    gradient with respect to ``o_k(x)`` is ``-y_k`` where
    ``y_k o_k(x) <= beta_t`` and ``0`` elsewhere (at the kink the unit
    updates, as the perceptron does on a zero margin), and back-propagation
    carries it through the ReLU layers. The weights are
    drawn by He initialization, ``N(0, 2 / fan_in)``, and the intercepts
    start at zero. float32 data is trained in float32: the weights, the
    activations and the gradients keep the dtype of ``X``.

    A binary problem has one output unit, positive for ``classes_[1]``;
    :meth:`predict` then gives ``classes_[1]`` on a value ``>= 0``. With
    more classes it gives the class of the largest output.

    The solvers are scikit-learn's own, from the private module
    ``sklearn.neural_network._stochastic_optimizers``.

    Outputs, a loss, weights or the moments of the solver that overflow
    (huge inputs, a large ``learning_rate_init``) stop training in the
    epoch where they appear with a ``ValueError`` that names the remedy:
    scale the input (for example with
    :class:`~sklearn.preprocessing.StandardScaler`) or lower
    ``learning_rate_init``. The estimator then keeps the model it had
    before the call (none, for a first fit). An output beyond the float
    range on huge input makes :meth:`decision_function` and :meth:`predict`
    raise the same error.

    :meth:`decision_function` and :meth:`predict` pass the rows through
    the network in blocks whose activations, of every layer, fit in
    scikit-learn's ``working_memory``.

    The outputs are margins, not probabilities, and the network has no
    ``predict_proba``: for probabilities, wrap it in
    :class:`~sklearn.calibration.CalibratedClassifierCV`, which maps the
    outputs to probabilities fitted on held-out data (see
    :ref:`probabilities`).

    References
    ----------
    .. [1] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Section 3.
    .. [2] K. He, X. Zhang, S. Ren and J. Sun, "Delving deep into
       rectifiers: surpassing human-level performance on ImageNet
       classification", ICCV 2015.
    .. [3] D. P. Kingma and J. Ba, "Adam: a method for stochastic
       optimization", ICLR 2015.

    Examples
    --------
    On the raw pixels of the digits, with a margin that grows as ``sqrt(t)``
    and early stopping:

    >>> from sklearn.datasets import load_digits
    >>> from sklearn.model_selection import train_test_split
    >>> from skperc import MarginMLPClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    >>> clf = MarginMLPClassifier(
    ...     beta="sublinear", early_stopping=True, random_state=0
    ... )
    >>> clf.fit(X_train, y_train).score(X_test, y_test) > 0.95
    True
    >>> clf.decision_function(X_test[:2]).shape
    (2, 10)
    """

    _parameter_constraints: dict = {
        "hidden_layer_sizes": [
            "array-like",
            Interval(Integral, 1, None, closed="left"),
        ],
        "beta": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"sublinear", "power"}),
            ThresholdSchedule,
        ],
        "c": [Interval(Real, 0, 1, closed="neither")],
        "hidden_beta": [ThresholdSchedule, None],
        "solver": [StrOptions({"adam", "sgd"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "learning_rate": [StrOptions({"constant", "invscaling", "adaptive"})],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "power_t": [Interval(Real, 0, None, closed="left")],
        "momentum": [Interval(Real, 0, 1, closed="both")],
        "nesterovs_momentum": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "beta_1": [Interval(Real, 0, 1, closed="left")],
        "beta_2": [Interval(Real, 0, 1, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "n_iter_no_change": [
            Interval(Integral, 1, None, closed="left"),
            Options(Real, {np.inf}),
        ],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(300,),
        *,
        beta=1.0,
        c=0.5,
        hidden_beta=None,
        solver="adam",
        alpha=0.0,
        learning_rate="constant",
        learning_rate_init=0.001,
        power_t=0.5,
        momentum=0.9,
        nesterovs_momentum=True,
        batch_size=128,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        early_stopping=False,
        validation_fraction=0.1,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        n_iter_no_change=10,
        warm_start=False,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.beta = beta
        self.c = c
        self.hidden_beta = hidden_beta
        self.solver = solver
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
    def fit(self, X, y, sample_weight=None):
        """Train for up to ``max_iter`` epochs, until the stopping rule.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data. float32 data is trained in float32.

        y : array-like of shape (n_samples,)
            Target values.

        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples in the loss.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, classes=None, incremental=False)

    @available_if(lambda est: est._check_no_early_stopping())
    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Make one epoch over a batch, continuing the same run.

        The weights, the optimizer state and the update count ``t`` carry
        over from call to call.

        Parameters
        ----------
        {{partial_fit_batch}}

        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples of the batch.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, classes=classes, incremental=True)

    @consistent_read
    def decision_function(self, X):
        """The output units ``o_k(x) = w_k . G(x) + b_k``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The data.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For a binary problem, positive values favour ``classes_[1]``.
        """
        scores = self._outputs(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    @consistent_read
    def predict(self, X):
        """Predict a class for each sample: the largest output unit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the binary output is ``>= 0``, else
            ``classes_[0]``; with several classes, the class of the largest
            output.
        """
        codes = predicted_codes(self._outputs(X))
        return self.classes_[codes]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_no_early_stopping(self):
        if self.early_stopping:
            raise AttributeError(
                "partial_fit is not available with early_stopping=True: a "
                "stream has no validation set to stop on."
            )
        return True

    def _outputs(self, X):
        """The output units on validated X, of shape (n_samples, n_outputs_)."""
        check_is_fitted(self)
        X = check_sparse_structure(validate_data(self, X, reset=False, **_VALIDATION))
        # The activations of every layer of a block of rows are held at once:
        # blocks within working_memory, and none of one row, which BLAS
        # multiplies by another kernel than a row among others.
        row_bytes = np.result_type(X.dtype, *self.coefs_).itemsize * sum(
            coef.shape[1] for coef in self.coefs_
        )
        blocks = blocks_in_working_memory(X.shape[0], row_bytes, min_rows=2)
        # an overflow raises below, naming its cause
        with np.errstate(over="ignore", invalid="ignore"):
            outputs = [
                # one block reads X itself: a slice of CSR rows would copy them
                self._forward(
                    X if len(blocks) == 1 else X[block], self.hidden_thresholds_
                )[-1]
                for block in blocks
            ]
        return check_finite_scores(
            np.concatenate(outputs) if len(blocks) > 1 else outputs[0]
        )

    def _schedule(self):
        """The margin schedule selected by beta and c, checked."""
        if isinstance(self.beta, ThresholdSchedule):
            schedule = self.beta
        elif isinstance(self.beta, str):
            if self.beta == "power":
                warnings.warn(
                    'beta="power" of MarginMLPClassifier is SublinearThreshold '
                    '(t^(1 - c)), which is named beta="sublinear"; "power" will '
                    "name the infinity-perceptron's PowerThreshold, as in the "
                    'perceptrons. Use beta="sublinear".',
                    FutureWarning,
                    # the caller of fit, past the two decorators
                    stacklevel=6,
                )
            schedule = SublinearThreshold(self.c)
        else:
            schedule = ConstantThreshold(self.beta)
        return _checked(schedule)

    def _fit(self, X, y, sample_weight, classes, incremental):
        hidden_layer_sizes = np.atleast_1d(self.hidden_layer_sizes)
        if hidden_layer_sizes.ndim != 1 or not np.all(hidden_layer_sizes > 0):
            raise ValueError(
                "hidden_layer_sizes must be positive integers; got "
                f"{self.hidden_layer_sizes!r}."
            )
        schedule = self._schedule()
        clock = None if self.hidden_beta is None else _checked(self.hidden_beta)
        continuing = hasattr(self, "coefs_") and (incremental or self.warm_start)
        # A continued run keeps the features and classes it started with.
        X, y = validate_data(self, X, y, reset=not continuing, **_VALIDATION)
        X = check_sparse_structure(X)
        if incremental:
            run_classes, codes = checked_partial_fit_codes(
                self, y, classes, not continuing
            )
        else:
            run_classes, codes = fit_labels(self, y, continuing)
        weight = _check_sample_weight(
            sample_weight, X, dtype=X.dtype, ensure_non_negative=True
        )
        if run_classes.shape[0] == 2:
            targets = np.where(codes == 1, 1, -1)[:, None]
        else:
            targets = np.where(codes[:, None] == np.arange(len(run_classes)), 1, -1)
        targets = targets.astype(X.dtype)

        if self.early_stopping:
            # a sample too small for the split stops the fit before any work
            check_validation_split(codes, self.validation_fraction)
        self._random_state = check_random_state(self.random_state)
        if continuing:
            self._own_run_state(X.dtype, clock)
        else:
            self.classes_ = run_classes
            self._initialize(
                [X.shape[1], *hidden_layer_sizes.tolist(), targets.shape[1]],
                X.dtype,
                clock,
            )
        if not incremental or not continuing:
            self._start_stopping_rule()
        if incremental and hasattr(self, "_optimizer"):
            # the optimizer counts its steps: the previous model's stays
            self._optimizer = copy.copy(self._optimizer)
        else:
            params = self.coefs_ + self.intercepts_
            if self.solver == "adam":
                self._optimizer = AdamOptimizer(
                    params,
                    self.learning_rate_init,
                    self.beta_1,
                    self.beta_2,
                    self.epsilon,
                )
            else:
                self._optimizer = SGDOptimizer(
                    params,
                    self.learning_rate_init,
                    self.learning_rate,
                    self.momentum,
                    self.nesterovs_momentum,
                    self.power_t,
                )

        if self.early_stopping:
            X, X_val, targets, _, weight, weight_val, codes, codes_val = (
                train_test_split(
                    X,
                    targets,
                    weight,
                    codes,
                    random_state=self._random_state,
                    test_size=self.validation_fraction,
                    stratify=codes,
                )
            )
            validation = (X_val, codes_val, weight_val)
        else:
            validation = None
        self._run_epochs(X, targets, weight, schedule, clock, validation, incremental)
        if self.early_stopping:
            self.coefs_, self.intercepts_ = self._best_coefs, self._best_intercepts
            self.hidden_n_updates_ = self._best_clocks
            self.hidden_thresholds_ = self._best_thresholds
        if not all(np.isfinite(w).all() for w in self.coefs_ + self.intercepts_):
            raise_non_finite("the weights", "at the end of the run", _REMEDY)
        return self

    def _initialize(self, layer_units, dtype, clock):
        """He-initialized weights, zero intercepts and fresh counters."""
        self.n_layers_ = len(layer_units)
        self.n_outputs_ = layer_units[-1]
        self.coefs_ = [
            self._random_state.normal(
                0.0, np.sqrt(2.0 / fan_in), (fan_in, fan_out)
            ).astype(dtype, copy=False)
            for fan_in, fan_out in zip(layer_units[:-1], layer_units[1:], strict=True)
        ]
        self.intercepts_ = [
            np.zeros(fan_out, dtype=dtype) for fan_out in layer_units[1:]
        ]
        self.n_iter_ = 0
        self.t_ = 0
        self.n_updates_ = 0
        self._radius = 0.0
        self.loss_curve_ = []
        if clock is None:
            self.hidden_n_updates_ = self.hidden_thresholds_ = None
        else:
            hidden_units = layer_units[1:-1]
            self.hidden_n_updates_ = [np.zeros(n, dtype=np.int64) for n in hidden_units]
            self._hidden_radius = [0.0] * len(hidden_units)
            self.hidden_thresholds_ = [
                _clock_thresholds(clock, counts, 0.0, dtype)
                for counts in self.hidden_n_updates_
            ]

    def _own_run_state(self, dtype, clock):
        """Copies of the state a continued run writes into, so that the
        previous model (which may be read-only, memory-mapped) stays as
        it was."""
        self.coefs_ = [np.array(w) for w in self.coefs_]
        self.intercepts_ = [np.array(b) for b in self.intercepts_]
        self.loss_curve_ = list(self.loss_curve_)
        if (clock is None) != (self.hidden_n_updates_ is None):
            raise ValueError(
                "hidden_beta must stay None, or stay a schedule, in a continued "
                "run: the hidden units' clocks cannot start or stop midway."
            )
        if clock is not None:
            self._hidden_radius = list(self._hidden_radius)
            self.hidden_n_updates_ = list(self.hidden_n_updates_)

    def _start_stopping_rule(self):
        """A fresh state of the stopping rule, for each call of fit."""
        self._no_improvement_count = 0
        if self.early_stopping:
            self.validation_scores_ = []
            self.best_validation_score_ = -np.inf
            self.best_loss_ = None
            self._best_coefs = [w.copy() for w in self.coefs_]
            self._best_intercepts = [b.copy() for b in self.intercepts_]
            self._best_clocks = self.hidden_n_updates_
            self._best_thresholds = self.hidden_thresholds_
        else:
            self.validation_scores_ = None
            self.best_validation_score_ = None
            self.best_loss_ = np.inf

    def _forward(self, X, translations):
        """The activations of every layer: X, the hidden ReLUs, the outputs;
        ``translations[i]`` (if not None) is subtracted from the input of
        hidden layer ``i``."""
        activations = [X]
        for i, (coef, intercept) in enumerate(
            zip(self.coefs_, self.intercepts_, strict=True)
        ):
            z = safe_sparse_dot(activations[-1], coef, dense_output=True)
            z += intercept
            if i < len(self.coefs_) - 1:
                if translations is not None:
                    z -= translations[i]
                np.maximum(z, 0, out=z)
            activations.append(z)
        return activations

    def _clocked_forward(self, X, clock):
        """The activations of a training step, each hidden layer translated
        by the thresholds of its units' clocks, its radius following the
        batch's inputs to it first."""
        activations = [X]
        thresholds = []
        for i, (coef, intercept) in enumerate(
            zip(self.coefs_, self.intercepts_, strict=True)
        ):
            z = safe_sparse_dot(activations[-1], coef, dense_output=True)
            z += intercept
            if i < len(self.coefs_) - 1:
                if clock.radius_rule != "none":
                    self._hidden_radius[i] = _follow_radius(
                        self._hidden_radius[i],
                        np.sqrt(row_norms(activations[-1], squared=True)),
                        clock.radius_rule,
                    )
                thresholds.append(
                    _clock_thresholds(
                        clock,
                        self.hidden_n_updates_[i],
                        self._hidden_radius[i],
                        z.dtype,
                    )
                )
                z -= thresholds[-1]
                np.maximum(z, 0, out=z)
            activations.append(z)
        self.hidden_thresholds_ = thresholds
        return activations

    def _run_epochs(self, X, targets, weight, schedule, clock, validation, incremental):
        n_samples = X.shape[0]
        batch_size = min(self.batch_size, n_samples)
        order = np.arange(n_samples)
        total_weight = float(weight.sum())
        # A threshold that moves with t makes the training losses of two
        # epochs incomparable: with no validation score to watch, the run
        # takes its max_iter epochs, as scikit-learn's SGD does with tol=None.
        watched = validation is not None or isinstance(schedule, ConstantThreshold)
        if not watched:
            self.best_loss_ = None
        elif validation is None and self.best_loss_ is None:
            # a partial_fit run whose threshold was moving until now
            self.best_loss_ = np.inf
        self.n_iter_ = 0
        for _ in range(self.max_iter):
            if self.shuffle:
                self._random_state.shuffle(order)
            epoch_loss = 0.0
            for start in range(0, n_samples, batch_size):
                rows = order[start : start + batch_size]
                epoch_loss += self._step(
                    X[rows], targets[rows], weight[rows], schedule, clock
                )
            loss = epoch_loss / total_weight if total_weight > 0 else 0.0
            # A weight that overflowed may not reach the outputs (ReLU maps
            # -inf to 0), and Adam's second moment of a huge gradient
            # overflows alone, after which its steps are 0 for good: every
            # epoch checks them all.
            if not (
                np.isfinite(loss)
                and all(
                    np.isfinite(w).all()
                    for w in self.coefs_
                    + self.intercepts_
                    + _solver_state(self._optimizer)
                )
            ):
                raise_non_finite(
                    "the loss, the weights or the solver's moments",
                    f"in epoch {self.n_iter_ + 1} ({self.n_updates_} updates counted): "
                    "training stopped there",
                    _REMEDY,
                )
            self.n_iter_ += 1
            self.t_ += n_samples
            self.loss_ = loss
            self.loss_curve_.append(self.loss_)
            if self.verbose:
                print(f"Iteration {self.n_iter_}, loss = {self.loss_:.8f}")
            if watched:
                self._update_no_improvement_count(validation)
            # the step of learning_rate="invscaling" for the next epoch
            self._optimizer.iteration_ends(self.t_)
            if self._no_improvement_count > self.n_iter_no_change:
                measure = (
                    "Validation score" if validation is not None else "Training loss"
                )
                # learning_rate="adaptive" divides the step instead, until 1e-6
                if self._optimizer.trigger_stopping(
                    f"{measure} did not improve more than tol={self.tol} for "
                    f"{self.n_iter_no_change} consecutive epochs.",
                    self.verbose,
                ):
                    break
                self._no_improvement_count = 0
            if incremental:
                break
            if watched and self.n_iter_ == self.max_iter:
                warnings.warn(
                    f"{type(self).__name__} reached max_iter={self.max_iter} "
                    "epochs and the optimization hasn't converged yet. Consider "
                    "increasing max_iter.",
                    ConvergenceWarning,
                    # point at the caller of fit, past the two decorators
                    stacklevel=6,
                )

    def _step(self, X, targets, weight, schedule, clock):
        """One gradient step on a batch; returns the batch's weighted loss sum,
        with the penalty of ``alpha``."""
        if clock is None:
            activations = self._forward(X, None)
        else:
            activations = self._clocked_forward(X, clock)
        if not np.isfinite(activations[-1]).all():
            raise_non_finite(
                "the output of the network",
                f"in epoch {self.n_iter_ + 1} ({self.n_updates_} updates counted): "
                "training stopped there",
                _REMEDY,
            )
        if schedule.radius_rule != "none":
            self._radius = _follow_radius(
                self._radius,
                np.linalg.norm(activations[-2], axis=1),
                schedule.radius_rule,
            )
        beta = schedule._checked_threshold(self.n_updates_ + 1, self._radius)
        margins = targets * activations[-1]
        losses = np.maximum(beta - margins, 0).sum(axis=1)
        batch_weight = weight.sum()
        scale = weight / batch_weight if batch_weight > 0 else weight
        # d loss / d o_k = -y_k where the margin is at most beta_t
        delta = np.where(margins <= beta, -targets, 0) * scale[:, None]

        coef_grads = [None] * len(self.coefs_)
        intercept_grads = [None] * len(self.coefs_)
        for layer in range(len(self.coefs_) - 1, -1, -1):
            coef_grads[layer] = safe_sparse_dot(
                activations[layer].T, delta, dense_output=True
            )
            intercept_grads[layer] = delta.sum(axis=0)
            if layer > 0:
                delta = delta @ self.coefs_[layer].T
                delta *= activations[layer] > 0
                if clock is not None:
                    # a new array: the previous model's counts stay
                    self.hidden_n_updates_[layer - 1] = self.hidden_n_updates_[
                        layer - 1
                    ] + (delta != 0).any(axis=0)
        penalty = 0.0
        if self.alpha > 0 and batch_weight > 0:
            # scikit-learn's: the gradient of 0.5 alpha ||W||^2 / batch_weight
            # at the weights before the step, whose loss it joins
            penalty = 0.5 * self.alpha * sum(float(np.vdot(W, W)) for W in self.coefs_)
            for layer, W in enumerate(self.coefs_):
                coef_grads[layer] += (self.alpha / batch_weight) * W
        self._optimizer.update_params(
            self.coefs_ + self.intercepts_, coef_grads + intercept_grads
        )
        self.n_updates_ += 1
        return float(losses @ weight) + penalty

    def _update_no_improvement_count(self, validation):
        if validation is None:
            if self.loss_curve_[-1] > self.best_loss_ - self.tol:
                self._no_improvement_count += 1
            else:
                self._no_improvement_count = 0
            self.best_loss_ = min(self.best_loss_, self.loss_curve_[-1])
            return
        X_val, codes_val, weight_val = validation
        score = self._accuracy(X_val, codes_val, weight_val)
        self.validation_scores_.append(score)
        if self.verbose:
            print(f"Validation score: {score:f}")
        if score < self.best_validation_score_ + self.tol:
            self._no_improvement_count += 1
        else:
            self._no_improvement_count = 0
        if score > self.best_validation_score_:
            self.best_validation_score_ = score
            self._best_coefs = [w.copy() for w in self.coefs_]
            self._best_intercepts = [b.copy() for b in self.intercepts_]
            self._best_clocks = self.hidden_n_updates_
            self._best_thresholds = self.hidden_thresholds_

    def _accuracy(self, X, codes, weight):
        """Weighted accuracy on validated data, given as class indices."""
        predicted = predicted_codes(self._forward(X, self.hidden_thresholds_)[-1])
        return float(np.average(predicted == codes, weights=weight))


def _solver_state(optimizer):
    """The arrays that scikit-learn's solver carries from step to step:
    Adam's moments, SGD's velocities."""
    if isinstance(optimizer, AdamOptimizer):
        return optimizer.ms + optimizer.vs
    return list(optimizer.velocities)


def _follow_radius(radius, norms, rule):
    """The running radius after a batch with these norms, in order."""
    if rule == "max":
        return max(radius, float(norms.max()))
    # Algorithm 3: an example longer than the radius doubles it to twice its
    # norm; the examples after it are measured against the new radius.
    for norm in norms[norms > radius]:
        if norm > radius:
            radius = 2.0 * float(norm)
    return radius


def _clock_thresholds(clock, counts, radius, dtype):
    """The threshold of each unit from its update count: ``threshold(count
    + 1, radius)``, asked once per distinct count."""
    distinct, position = np.unique(counts, return_inverse=True)
    values = [clock._checked_threshold(int(count) + 1, radius) for count in distinct]
    return np.asarray(values, dtype=dtype)[position.reshape(-1)]
