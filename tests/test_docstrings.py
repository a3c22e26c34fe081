"""Every public class and function documents exactly the parameters of its
signature, in order (the check scikit-learn runs on its own API)."""

import inspect

import pytest

import skperc
from skperc import concepts, datasets, kernels, metrics, schedules

docscrape = pytest.importorskip(
    "numpydoc.docscrape", reason="numpydoc parses the docstrings (extra 'docs')"
)

MODULES = [skperc, concepts, datasets, kernels, metrics, schedules]


def _public_callables():
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                yield f"{module.__name__}.{name}", obj, obj.__init__
                for method_name, method in vars_with_bases(obj):
                    yield f"{module.__name__}.{name}.{method_name}", method, method
            elif inspect.isfunction(obj):
                yield f"{module.__name__}.{name}", obj, obj


def vars_with_bases(cls):
    """The public methods of cls defined in skperc, its bases' included."""
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if not name.startswith("_") and member.__module__.startswith("skperc"):
            yield name, member


def _signature_names(function):
    names = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name == "self":
            continue
        prefix = {parameter.VAR_POSITIONAL: "*", parameter.VAR_KEYWORD: "**"}
        names.append(prefix.get(parameter.kind, "") + parameter.name)
    return names


CALLABLES = list(_public_callables())


def test_the_public_api_is_found():
    names = {name for name, _, _ in CALLABLES}
    assert "skperc.MarginPerceptron" in names
    assert "skperc.KernelPerceptron.partial_fit" in names
    assert "skperc.metrics.margin" in names


@pytest.mark.parametrize(
    "documented, signature",
    [(d, s) for _, d, s in CALLABLES],
    ids=[n for n, _, _ in CALLABLES],
)
def test_docstring_documents_the_signature(documented, signature):
    doc = (
        docscrape.ClassDoc(documented)
        if inspect.isclass(documented)
        else docscrape.FunctionDoc(documented)
    )
    described = [name for item in doc["Parameters"] for name in item.name.split(", ")]
    expected = _signature_names(signature)
    if expected == ["*args", "**kwargs"] and inspect.isclass(documented):
        expected = []
    assert described == expected
