"""bubblescope from Python (docs/python.md)."""
from ._api import *  # noqa: F401,F403
from ._api import __all__  # noqa: F401
