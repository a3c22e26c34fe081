"""The decision function and prediction of the linear classifiers."""

import numpy as np
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ._classes import check_finite_scores, classes_from_scores


class LinearPredictMixin:
    """``decision_function`` and ``predict`` of a fitted ``coef_`` and
    ``intercept_``, one row per one-vs-rest problem, with ``sign(0) = +1``."""

    def decision_function(self, X):
        """The signed value of each one-vs-rest problem, ``coef_ x + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The data.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For a binary problem, positive values favour ``classes_[1]``.
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, reset=False, accept_sparse="csr", dtype=[np.float64, np.float32]
        )
        # an overflow raises below, naming its cause
        with np.errstate(over="ignore", invalid="ignore"):
            scores = safe_sparse_dot(X, self.coef_.T, dense_output=True)
            scores += self.intercept_
        check_finite_scores(scores)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predict a class for each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the binary decision value is ``>= 0``,
            else ``classes_[0]``; with several classes, the class of the
            largest decision value.
        """
        # decision_function first: it raises NotFittedError before fit
        scores = self.decision_function(X)
        return classes_from_scores(self.classes_, scores)
