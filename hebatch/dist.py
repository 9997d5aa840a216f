"""The old name of the scheduler layer: ``from hebatch import dist`` is ``hebatch.distributed``.

The package itself is named ``distributed`` because linters, formatters and packaging tools skip
folders named ``dist`` as build output.
"""

import sys

from . import distributed

sys.modules[__name__] = distributed
