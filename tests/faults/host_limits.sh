#!/bin/sh
# The Python host with a file size limit (RLIMIT_FSIZE): the disk-full stand-in of the disk cases.
# A write past the limit fails with EFBIG after the file was opened (truncated) and partly written,
# as on a full disk; Python ignores SIGXFSZ, so the write raises instead of killing the host.
exec prlimit --fsize="$FAULT_HOST_FSIZE" -- "$FAULT_HOST_PYTHON" "$@"
