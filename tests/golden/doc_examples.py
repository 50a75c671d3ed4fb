"""Runs a documentation example as doctest's runner does, for the transcript generators
(gen_aesara_docs.py, gen_peer_docs.py)."""
import doctest
import sys
import traceback


def execute(source, globs):
    """Runs one example's source in globs as doctest's runner does (a printed sys.stdout reads as
    it will in the test); returns (stdout, the exception's line or None)."""
    out = doctest._SpoofOut()
    saved = sys.stdout, sys.displayhook
    sys.stdout, sys.displayhook = out, sys.__displayhook__
    try:
        exec(compile(source, "<doctest>", "single", 0, True), globs)
        exc = None
    except KeyboardInterrupt:
        raise
    except BaseException:
        exc = traceback.format_exception_only(*sys.exc_info()[:2])[-1]
    finally:
        sys.stdout, sys.displayhook = saved
    return out.getvalue(), exc
