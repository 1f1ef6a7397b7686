"""`python -m hteb_score.cli`: the same as the `hteb-score` command (importing this module runs nothing)."""

import sys

from hteb_score.cli import main

if __name__ == "__main__":
    sys.exit(main())
