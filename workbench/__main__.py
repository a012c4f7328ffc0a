"""``python -m workbench``: the same command line as the ``workbench`` script."""

from workbench.cli import entry

entry()
