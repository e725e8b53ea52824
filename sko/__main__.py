"""``python -m sko``: see :mod:`sko.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
