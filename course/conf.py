"""Sphinx configuration of the course's static site (``make site``): every chapter and lab as committed,
outputs included, nothing executed (myst-nb, nb_execution_mode "off"). The source directory is the
repository root, so links between course/ and labs/ resolve as they do on GitHub and in JupyterLab."""
project = "gpusim: GPU 调度与资源管理"
author = "gpusim"
copyright = "gpusim authors, Apache-2.0"
extensions = ["myst_nb"]
root_doc = "course/index"
nb_execution_mode = "off"           # the committed outputs are the course; nbval keeps them reproducible
nb_merge_streams = True
language = "zh_CN"
html_title = "gpusim"
html_theme = "alabaster"
html_theme_options = {"page_width": "1180px", "sidebar_width": "260px"}
exclude_patterns = [".venv", "build", "gpusim", "tests", "benchmarks", "examples", "*.egg-info", ".ci", ".git",
                    "README.md", "**/.ipynb_checkpoints", ".pytest_cache", "**/.pytest_cache", ".hypothesis",
                    ".import_linter_cache"]
suppress_warnings = []
# Heading anchors as JupyterLab forms them (the heading's text, spaces → "-"), so that a link such as
# 04-workflow.ipynb#3.-排队：卡不够时会发生什么 (chapter 10 links every answer to a section) works in JupyterLab
# and on this site alike; a link to a heading that does not exist is a warning, hence an error here.
myst_heading_anchors = 3
myst_heading_slug_func = "gpusim.labs.interview.heading_anchor"
