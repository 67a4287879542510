"""The package's exceptions: each carries the CLI's one-line message for the same failure."""


class BubblescopeError(Exception):
    """Base of every error bubblescope raises; ``str(error)`` is the CLI's one line."""


class UsageError(BubblescopeError, ValueError):
    """An argument the CLI would refuse (a bad --rank, a bad threshold, an unknown option)."""


class TraceError(BubblescopeError):
    """Input that cannot be read or analysed: the file and byte offset where the CLI names them,
    and --strict's rejections."""


class OutputError(BubblescopeError, OSError):
    """A result that could not be written (the CLI's exit status 1)."""


class OutOfMemoryError(BubblescopeError, MemoryError):
    """The job did not fit in this process's memory; the message says what to do instead."""


_BY_KIND = {
    "usage": UsageError,
    "trace": TraceError,
    "output": OutputError,
    "memory": OutOfMemoryError,
}


def from_native(failure):
    """The exception for a ``_core.Failure(kind, message)``."""
    kind, message = failure.args
    return _BY_KIND.get(kind, BubblescopeError)(message)


def _last_error_line(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("bubblescope: ")]
    return (errors or lines or ["bubblescope: failed without a message"])[-1]


def from_verb(status, stderr, out_of_memory):
    """The exception for a verb that ended with ``status`` after printing ``stderr``.

    The CLI's statuses: 2 a usage error or unreadable input (a usage error is the one followed
    by its "Run '... --help'" hint), 1 a result that could not be written."""
    line = _last_error_line(stderr)
    if out_of_memory:
        return OutOfMemoryError(line)
    if status == 2:
        # A parse error comes with its "--help" hint; a flag's value refused after parsing
        # (a gate threshold, a rank list) is a line led by the flag. --strict's rejections are
        # led by --strict but are the input's.
        if "--help' for more information." in stderr or (
                line.startswith("bubblescope: --") and not line.startswith("bubblescope: --strict")):
            return UsageError(line)
        return TraceError(line)
    return OutputError(line)
