import sys

from .notebook import main

sys.exit(main())
