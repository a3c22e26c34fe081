"""
=============================
Tuning beta with GridSearchCV
=============================

The threshold ``beta`` is an ordinary hyper-parameter: a grid search can
pick it, together with ``alpha`` and averaging, inside a pipeline.
"""

# %%
# Breast cancer is not linearly separable, so every fit runs its ``max_iter``
# epochs and would warn; the warnings are silenced here.
import warnings

import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skperc import MarginPerceptron

warnings.filterwarnings("ignore", category=ConvergenceWarning)
X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
search = GridSearchCV(
    make_pipeline(StandardScaler(), MarginPerceptron(max_iter=200, random_state=0)),
    {
        "marginperceptron__beta": [0.0, 1.0, 30.0, "scale", "power"],
        "marginperceptron__alpha": [1.3, 1.7],
        "marginperceptron__average": [False, True],
    },
    cv=5,
)
search.fit(X_train, y_train)
print("best:", search.best_params_)
print(f"held-out accuracy: {search.score(X_test, y_test):.3f}")

# %%
# The cross-validated accuracy of every setting. ``alpha`` only matters for
# ``beta="power"``.
results = pd.DataFrame(search.cv_results_)
table = results.pivot_table(
    index=["param_marginperceptron__beta", "param_marginperceptron__alpha"],
    columns="param_marginperceptron__average",
    values="mean_test_score",
)
table.round(3)
