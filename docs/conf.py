"""Sphinx configuration of kiln's documentation site (`make docs` builds it into build-docs/).

The pages are the Markdown files of docs/ (read by MyST), the API reference is
generated from the package's docstrings by autodoc, which imports kiln from the
source tree (python/, with the extension built by `make build`), so the site says
what help() says.  docs/building-docs.md says why Sphinx.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# the package autodoc documents: the source tree's, or another build's (make test-san-py)
sys.path.insert(0, os.environ.get("KILN_TEST_PYDIR") or os.path.join(os.path.dirname(HERE), "python"))

import kiln  # noqa: E402  (the version, and a clear failure when the extension is not built)

project = "kiln"
author = "the kiln developers"
release = version = kiln.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
root_doc = "index"
myst_heading_anchors = 3          # [text](page.md#a-heading) links to headings
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "none"        # the signatures say it; kiln's API has no annotations yet

html_theme = "alabaster"          # Sphinx's own: no theme package to install
html_title = f"kiln {release}"
html_theme_options = {"description": "a JIT compiler for Python kernels", "fixed_sidebar": True}
html_static_path = []
