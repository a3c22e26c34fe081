"""The link from an estimator's HTML representation to its documentation."""

# The documentation of skperc, built from doc/ (doc/conf.py reads it here).
DOCUMENTATION_URL = "https://skperc.readthedocs.io/en/latest/"


class DocLinkMixin:
    """Point the "?" badge of scikit-learn's HTML representation at the
    estimator's page of skperc's API reference.

    scikit-learn's ``BaseEstimator`` links the badge only for classes of the
    module ``_doc_link_module``, to ``_doc_link_template`` formatted with the
    public module (up to the first private submodule, ``skperc`` for
    ``skperc._margin_mlp``) and the class name: the page that
    ``doc/api.rst`` generates for it. Listed before ``BaseEstimator``.
    """

    _doc_link_module = "skperc"
    _doc_link_template = (
        DOCUMENTATION_URL + "generated/{estimator_module}.{estimator_name}.html"
    )
