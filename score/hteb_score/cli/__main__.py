"""`python -m hteb_score.cli`: the same as the `hteb-score` command."""

import sys

from hteb_score.cli import main

sys.exit(main())
