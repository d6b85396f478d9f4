"""``python -m dppca.cli``: the same as the ``dppca`` command."""

import sys

from . import main

sys.exit(main())
