"""``python -m gpusim``: the same command line as ``gpusim``."""
import sys

from .cli import main

sys.exit(main())
