"""``python -m memstack``: the command line (``memstack``)."""

from memstack.doors.cli import main

main()
