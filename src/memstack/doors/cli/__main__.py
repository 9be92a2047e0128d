"""``python -m memstack.doors.cli``."""

from memstack.doors.cli import main

main()
