"""The Python examples of README.rst run and do what they say."""

import re
import warnings
from pathlib import Path

import pytest
from sklearn.exceptions import ConvergenceWarning

README = Path(__file__).parents[1] / "README.rst"
BLOCKS = re.findall(
    r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", README.read_text()
)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) == 2


@pytest.mark.parametrize("block", BLOCKS, ids=["quick start", "grid search"])
def test_readme_example_runs(block, capsys):
    code = "\n".join(line[4:] for line in block.splitlines())
    with warnings.catch_warnings():
        # breast cancer is not separable: the grid search's fits of
        # beta="power" run to max_iter and warn
        warnings.simplefilter("ignore", ConvergenceWarning)
        exec(compile(code, str(README), "exec"), {})
    assert capsys.readouterr().out.strip()
