"""skperc: perceptron-family learners for scikit-learn."""

from importlib.metadata import PackageNotFoundError, version

from ._kernel_perceptron import KernelPerceptron
from ._margin_perceptron import MarginPerceptron

try:
    __version__ = version("skperc")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0+unknown"

__all__ = ["KernelPerceptron", "MarginPerceptron", "__version__"]
