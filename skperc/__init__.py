"""skperc: perceptron-family learners for scikit-learn."""

from importlib.metadata import PackageNotFoundError, version

from ._halving import HalvingClassifier
from ._kernel_perceptron import KernelPerceptron
from ._linear_program import LinearProgramClassifier
from ._margin_mlp import MarginMLPClassifier
from ._margin_perceptron import MarginPerceptron

try:
    __version__ = version("skperc")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0+unknown"

__all__ = [
    "HalvingClassifier",
    "KernelPerceptron",
    "LinearProgramClassifier",
    "MarginMLPClassifier",
    "MarginPerceptron",
    "__version__",
]
