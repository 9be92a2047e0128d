"""``python -m memstack``: the command line (``memstack``)."""

from memstack.cli import main

main()
