"""Collection settings for the doctests of the package.

The ONNX converters import skl2onnx, which only the extra ``onnx``
installs: without it their modules are left out of the doctest run (their
tests, tests/test_onnx.py, skip with the reason).
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("skl2onnx") is None:
    collect_ignore += ["skperc/onnx.py", "skperc/_onnx_halving.py"]
