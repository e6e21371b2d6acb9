"""Answer type codes for the offline reader: identifiers, reference numbers and versions."""

from __future__ import annotations

import re

CODE_RE = re.compile(r"(?<![\w-])(?:\d+(?:\.\d+){2,}|(?=[\w/.\-#]*\d)(?=[\w/.\-#]*[A-Za-z\-/#])[A-Za-z0-9][\w/.\-#]{1,30}"
                     r"[A-Za-z0-9])(?![\w-])")
