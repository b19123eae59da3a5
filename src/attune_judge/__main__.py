"""``python -m attune_judge`` is the ``attune-judge`` command."""

from attune_judge.cli import main

main()
