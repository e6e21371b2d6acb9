"""``python -m madqa``: the command line."""

import sys

from madqa.cli import main

sys.exit(main())
