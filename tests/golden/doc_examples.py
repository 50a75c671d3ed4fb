"""Runs a documentation example as doctest's runner does, for the transcript generators
(gen_aesara_docs.py, gen_peer_docs.py)."""
import doctest
import re
import sys
import traceback

DIRECTIVE = re.compile(r"#\s*doctest:")


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


def add_ellipsis(source):
    """Source with +ELLIPSIS added to its doctest directive (or a new directive)."""
    lines = source.rstrip("\n").split("\n")
    i = next((i for i, line in enumerate(lines) if DIRECTIVE.search(line)), None)
    if i is None:
        lines[-1] += "  # doctest: +ELLIPSIS"
    else:
        lines[i] += " +ELLIPSIS"
    return "\n".join(lines) + "\n"


def prompt(source):
    """An example's source with doctest's >>> and ... prompts."""
    lines = source.rstrip("\n").split("\n")
    return "".join(("... " if i else ">>> ") + line + "\n" for i, line in enumerate(lines))


def want_text(want):
    """Output as a doctest transcript spells it: blank lines as <BLANKLINE>."""
    return "".join((line if line.strip() else "<BLANKLINE>") + "\n"
                   for line in want.rstrip("\n").split("\n")) if want else ""
