"""
=========================================
Streaming with partial_fit, and averaging
=========================================

``partial_fit`` makes one pass over each batch and continues the same run:
update count, radius and averages carry over. On digits, which the
perceptron cannot separate one-vs-rest, the last weights swing from epoch to
epoch; the averaged perceptron of Freund and Schapire (``average=True``) is
steadier and usually more accurate.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skperc import MarginPerceptron

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

models = {
    "beta=0": MarginPerceptron(beta=0.0, random_state=0),
    "beta=0, average": MarginPerceptron(beta=0.0, average=True, random_state=0),
    'beta="scale"': MarginPerceptron(beta="scale", random_state=0),
    'beta="scale", average': MarginPerceptron(
        beta="scale", average=True, random_state=0
    ),
}
epochs = 20
accuracy = {name: [] for name in models}
for _ in range(epochs):
    for name, clf in models.items():
        # one pass over the training data, in batches of 200
        for batch in np.array_split(np.arange(len(y_train)), len(y_train) // 200):
            clf.partial_fit(X_train[batch], y_train[batch], classes=np.unique(y))
        accuracy[name].append(clf.score(X_test, y_test))

fig, ax = plt.subplots(figsize=(7, 4))
for name, values in accuracy.items():
    ax.plot(range(1, epochs + 1), values, label=name)
ax.set(xlabel="epoch", ylabel="held-out accuracy", ylim=(0.85, 1))
ax.legend()
plt.show()
