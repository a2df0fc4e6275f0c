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
