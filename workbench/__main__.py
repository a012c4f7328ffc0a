"""``python -m workbench``: the same command line as the ``workbench`` script."""

import sys

from workbench.cli import main

sys.exit(main())
