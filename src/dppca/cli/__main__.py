"""``python -m dppca.cli``: the ``dppca`` command without the installed entry point."""

import sys

from . import main

sys.exit(main())
