"""``python -m synthdp.cli``: the ``synthdp`` command."""

import sys

from synthdp.cli import main

if __name__ == "__main__":  # importing the module (as tools that list every module do) runs nothing
    sys.exit(main())
