"""Experiments: scenarios built, run and compared (a scoring strategy per run, a sharing mode per run),
and the widgets that rerun them. They sit above the views, which only read finished runs."""
