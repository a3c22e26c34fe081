"""The "?" badge of the HTML representation links to skperc's API pages."""

import re
from pathlib import Path

import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_html_repr

import skperc
from skperc._doc_link import DOCUMENTATION_URL

API = Path(__file__).parents[1] / "doc" / "api.rst"


def _api_pages():
    """The pages doc/api.rst generates: generated/<module>.<name>.html for
    each autosummary entry under a currentmodule."""
    pages, module = set(), None
    for line in API.read_text().splitlines():
        if line.startswith(".. currentmodule::"):
            module = line.split()[-1]
        elif re.fullmatch(r"   [A-Za-z_]\w*", line) and module:
            pages.add(f"generated/{module}.{line.strip()}.html")
    return pages


@pytest.mark.parametrize(
    "estimator",
    [getattr(skperc, name) for name in skperc.__all__ if name[0].isupper()],
)
def test_html_repr_links_to_the_api_page(estimator):
    page = f"generated/skperc.{estimator.__name__}.html"
    assert page in _api_pages()
    link = f'href="{DOCUMENTATION_URL}{page}"'
    assert link in estimator_html_repr(estimator())
    # in a pipeline, beside scikit-learn's own link
    html = estimator_html_repr(make_pipeline(StandardScaler(), estimator()))
    assert link in html
    assert "sklearn.preprocessing.StandardScaler.html" in html
