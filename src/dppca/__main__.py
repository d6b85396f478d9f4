"""``python -m dppca``: the ``dppca`` command without the installed entry point."""

import sys

from .cli import main

sys.exit(main())
