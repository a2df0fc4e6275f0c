"""``python -m gpusim``: the same command line as ``gpusim``."""
from .cli import entry

entry()
