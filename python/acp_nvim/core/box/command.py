"""A boxed command's argv when the workspace is an overlay: the folder check runs outside the box.

The editor starts ``prefix + launch_argv``, where ``launch_argv`` may be the terminal's folder check
(``sh -c CHECK acp.nvim FOLDER DEV:INO ARGV…``: run ARGV only if FOLDER is still the folder that
was approved). Inside an overlay a folder has the overlay's device, never the approved one, so
the prefix is a ``/bin/sh`` shim that makes that same check on the user's folder first, then runs
bubblewrap with ARGV alone (``--chdir`` enters the agent's view of the folder). Any other
``launch_argv`` is run in the box as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

SHIM = r'''n=$1; check=$2; shift 2
i=0; while [ "$i" -lt "$n" ]; do set -- "$@" "$1"; shift; i=$((i + 1)); done
if [ "$#" -gt "$((n + 6))" ] && [ "$1" = /bin/sh ] && [ "$2" = -c ] && [ "$3" = "$check" ] && [ "$4" = acp.nvim ]; then
  cd -P -- "$5" 2>/dev/null || { printf "acp.nvim: cannot enter %s: not run\n" "$5" >&2; exit 126; }
  id=$(command -p stat -L -c %d:%i . 2>/dev/null || command -p stat -L -f %d:%i . 2>/dev/null)
  why="acp.nvim: %s is not the folder that was approved (%s, not %s): not run\n"
  [ "$id" = "$6" ] || { printf "$why" "$5" "$id" "$6" >&2; exit 126; }
  shift 6
fi
m=$(($# - n)); i=0; while [ "$i" -lt "$m" ]; do set -- "$@" "$1"; shift; i=$((i + 1)); done
exec "$@"'''
"""``sh -c SHIM acp.nvim-box N CHECK BWRAP_ARGV(N, ending in --) LAUNCH_ARGV…``."""


def checked_prefix(bwrap_argv: Sequence[str], check: str) -> list[str]:
    """The prefix that runs ``launch_argv`` in the box made by ``bwrap_argv`` (which ends in ``--``)."""
    return ["/bin/sh", "-c", SHIM, "acp.nvim-box", str(len(bwrap_argv)), check, *bwrap_argv]


def with_binds(prefix: Sequence[str], binds: Sequence[str]) -> list[str]:
    """``prefix`` (``bwrap … --``, or ``checked_prefix``'s shim around it) with ``binds`` (bubblewrap
    options) added to the box, before its ``--``; the shim's count of bubblewrap words follows."""
    if not prefix or prefix[-1] != "--":
        raise ValueError("the box's argv does not end with --")
    words = [*prefix[:-1], *binds, "--"]
    if list(prefix[:2]) == ["/bin/sh", "-c"] and prefix[2] == SHIM:
        words[4] = str(int(prefix[4]) + len(binds))
    return words
