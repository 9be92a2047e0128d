"""``python -m memstack.cli``."""

from memstack.cli import main

main()
