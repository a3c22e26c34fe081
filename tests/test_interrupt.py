"""Ctrl-C stops a long fit at once, in every block of a threaded run, and
leaves the model as it was before the call.

Each case runs in a subprocess that receives a real SIGINT while a fit of
up to a million epochs, or a halving pass over a large sample, is under
way. (scikit-learn's Perceptron and SGDClassifier ignore it until their
compiled loop ends.)
"""

import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent(
    """
    import signal, sys, time, warnings
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.exceptions import ConvergenceWarning
    from skperc import HalvingClassifier, KernelPerceptron, MarginPerceptron

    warnings.simplefilter("ignore", ConvergenceWarning)
    # Ctrl-C raises KeyboardInterrupt even where the tests were started in
    # the background of a shell, which leaves SIGINT ignored in them
    signal.signal(signal.SIGINT, signal.default_int_handler)
    name, n_jobs = sys.argv[1], int(sys.argv[2])
    if name == "HalvingClassifier":
        # one pass over the stumps of 400 features, 10 problems: seconds
        rng = np.random.default_rng(0)
        X = rng.standard_normal((50_000, 400))
        y = rng.integers(10, size=len(X))
        clf = HalvingClassifier(n_jobs=n_jobs).fit(X[:200], y[:200])
    else:
        X, y = make_classification(
            20000, 20, n_classes=3, n_informative=5, flip_y=0.2, random_state=0
        )
        cls = MarginPerceptron if name == "MarginPerceptron" else KernelPerceptron
        clf = cls(max_iter=2, n_jobs=n_jobs, random_state=0).fit(X[:200], y[:200])
        # neither rule ends the fit: it runs until interrupted
        clf.set_params(max_iter=10**6, tol=None, early_stopping=False)
    before = clf.decision_function(X[:50])
    print("ready", flush=True)
    try:
        clf.fit(X, y)
    except KeyboardInterrupt:
        stopped = time.monotonic()
        cpu = time.process_time()
        time.sleep(1.0)
        busy = time.process_time() - cpu
        same = np.array_equal(clf.decision_function(X[:50]), before)
        print(stopped, busy, same, flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
@pytest.mark.parametrize(
    "name, n_jobs",
    [
        ("MarginPerceptron", 1),
        ("MarginPerceptron", 2),
        ("KernelPerceptron", 1),
        ("KernelPerceptron", 2),
        ("HalvingClassifier", 1),
        ("HalvingClassifier", 2),
    ],
)
def test_sigint_stops_the_fit_and_keeps_the_model(name, n_jobs):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, name, str(n_jobs)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # well inside the fit
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        # (a child that ignores the signal fails the test, not hangs it)
        stopped, busy, same = child.communicate(timeout=30)[0].split()
    finally:
        child.kill()
    # the fit ends within moments of the signal (a busy machine may delay it)
    assert float(stopped) - sent < 2.0
    # and no worker thread goes on computing after it
    assert float(busy) < 0.3
    assert same == "True"
