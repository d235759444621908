"""Named moments at which a test can stop a command, to kill it exactly there.

With `FEEDBACK_PAUSE_AT=<name>` in its environment, a process stops itself
(SIGSTOP) when it reaches the point of that name; the test waits for the stop
(`os.waitpid(pid, os.WUNTRACED)`), then SIGKILLs it. No polling of files, no
race with a fast machine or a loaded one. Unset, as in every real run, a
point costs one environment lookup.

Points: `file-read-starts` (a JSON-lines file's size taken, nothing read),
`load-before-commit` (every row of a load written, not committed),
`purge-archive-written` (the archive's temporary file flushed, not renamed),
`purge-archive-renamed` (the archive file in place, its rows not deleted),
`purge-rows-deleted` (a policy's rows deleted, not committed),
`purge-committed:<policy>` (that policy committed, the next not begun),
`publish-incremental-relation` (an incremental publish's copy of the serving file
brought up to date in one relation by difference, the others not yet),
`publish-before-rename` (the new serving file written and flushed, not renamed).
"""

from __future__ import annotations

import os
import signal
import threading

ENVIRONMENT_VARIABLE = "FEEDBACK_PAUSE_AT"


def pause_point(name: str) -> None:
    """Stop this process here if a test asked for this point.

    The SIGSTOP goes to the calling thread (pthread_kill), which then stops before its next instruction and
    the whole process with it. Sent to the process (os.kill), the kernel may hand it to another thread (in
    dbt, the hook runs in a worker thread, the main one waiting), and the caller runs on until that thread
    stops the group: the likely cause of a failure of tests/operations/test_dbt_publish.py's killed-build test
    under load, whose serving file already named the build it was killed in (not reproduced on demand)."""
    if os.environ.get(ENVIRONMENT_VARIABLE) == name:
        signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)
