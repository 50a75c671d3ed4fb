"""kiln.compile.mode: Aesara's compilation modes. The optimizer runs on the server (FAST_RUN,
FAST_COMPILE or none); NanGuardMode and DebugMode are checks run on each call. A mode's
`execute` says where calls run: "server", "local" (in this process), or None for
kiln.config.execute."""
import warnings

from kiln import _pb
from kiln.config import config

_EXECUTE = ("server", "local", None)
_OPTIMIZERS = {"default": "FAST_RUN", "fast_run": "FAST_RUN", "fast_compile": "FAST_COMPILE",
               None: "NONE", "None": "NONE"}


class Mode:
    """Aesara's Mode(linker, optimizer): the server links every mode the same way, so only the
    optimizer matters ('default' or 'fast_run', 'fast_compile', or None for no rewrites), and
    where the calls run (execute: 'server', 'local' or None for kiln.config.execute)."""
    check = "CHECK_NONE"

    def __init__(self, linker=None, optimizer="default", execute=None):
        if optimizer not in _OPTIMIZERS:
            raise ValueError("Mode: optimizer %r: expected 'default', 'fast_run', "
                             "'fast_compile' or None" % (optimizer,))
        if execute not in _EXECUTE:
            raise ValueError("Mode: execute %r: expected 'server', 'local' or None" % (execute,))
        self.linker, self.optimizer, self.execute = linker, optimizer, execute

    def including(self, *tags):
        return self

    def excluding(self, *tags):
        return self

    def __repr__(self):
        if self.execute is None:
            return "%s(optimizer=%r)" % (type(self).__name__, self.optimizer)
        return "%s(optimizer=%r, execute=%r)" % (type(self).__name__, self.optimizer,
                                                 self.execute)


class NanGuardMode(Mode):
    """Fails a call naming the first node whose output holds a NaN or an infinity. The server
    checks NaNs and infinities together; big_is_error (values over 1e10) is not checked."""

    def __init__(self, nan_is_error=None, inf_is_error=None, big_is_error=None,
                 optimizer="default", linker=None):
        super().__init__(linker, optimizer)
        if big_is_error:
            warnings.warn("NanGuardMode: Kiln does not check big values (big_is_error)")
        if nan_is_error is False and inf_is_error is False:
            self.check = "CHECK_NONE"
        else:
            self.check = "CHECK_NAN_GUARD"


class DebugMode(Mode):
    """Runs the optimized and the unoptimized graph on each call and fails naming the first
    output (and its node) whose values differ beyond rounding; NaNs and infinities fail too."""
    check = "CHECK_DEBUG"

    def __init__(self, optimizer="default", **kwargs):
        super().__init__(None, optimizer)


FAST_RUN = Mode(optimizer="fast_run")
FAST_COMPILE = Mode(optimizer="fast_compile")
_NAMED = {"FAST_RUN": FAST_RUN, "FAST_COMPILE": FAST_COMPILE, "NONE": Mode(optimizer=None),
          "DebugMode": DebugMode(), "DEBUG_MODE": DebugMode(), "NanGuardMode": NanGuardMode()}


def get_mode(mode):
    """Aesara's get_mode: a Mode from a Mode, a mode's name or None (FAST_RUN)."""
    if mode is None:
        return FAST_RUN
    if isinstance(mode, Mode):
        return mode
    if mode not in _NAMED:
        raise ValueError("mode %r: expected a Mode or one of %s" % (mode, ", ".join(_NAMED)))
    return _NAMED[mode]


def mode_options(mode):
    """The kiln.v1.Mode and kiln.v1.Check of an Aesara mode."""
    m = get_mode(mode)
    return (_pb.options_pb2.Mode.Value("MODE_" + _OPTIMIZERS[m.optimizer]),
            _pb.options_pb2.Check.Value(m.check))


def execute_of(mode):
    """Where the calls of a function compiled in `mode` run: "server" or "local"."""
    execute = get_mode(mode).execute or config.execute
    if execute not in ("server", "local"):
        raise ValueError("kiln.config.execute %r: expected 'server' or 'local'" % (execute,))
    return execute


# --- Aesara's other names at this path -----------------------------------------------------------
# Kiln links every function the same way on the server and runs core's rewrite phases, so
# Aesara's linkers and rewrite databases are stand-ins that say so when used.
from kiln.graph.standin import LINKERS, REWRITES, unsupported, unsupported_class  # noqa: E402


def get_default_mode():
    """The mode of config.mode (FAST_RUN unless set)."""
    return get_mode(getattr(config, "mode", None))


# Aesara's rewrite queries of its modes, by name: which of core's phases run is the mode's
# optimizer (these are informational).
OPT_NONE = "NONE"
OPT_FAST_RUN = "FAST_RUN"
OPT_FAST_COMPILE = "FAST_COMPILE"
OPT_MERGE = OPT_STABILIZE = OPT_O2 = OPT_O3 = OPT_FAST_RUN_STABLE = OPT_UNSAFE = OPT_FAST_RUN

optdb = unsupported("optdb", REWRITES)
register_optimizer = unsupported("register_optimizer", REWRITES)
register_linker = unsupported("register_linker", LINKERS)
register_mode = unsupported("register_mode", "Kiln's modes are Mode(optimizer=..., "
                                             "execute=...), NanGuardMode and DebugMode")
for _name in ("Linker", "PerformLinker", "CLinker", "OpWiseCLinker", "VMLinker", "JAXLinker",
              "NumbaLinker"):
    globals()[_name] = unsupported_class(_name, LINKERS)
for _name in ("GraphRewriter", "RewriteDatabase", "RewriteDatabaseQuery", "EquilibriumDB",
              "SequenceDB", "LocalGroupDB", "TopoDB", "MergeOptimizer", "AddDestroyHandler",
              "AddFeatureOptimizer", "PrintCurrentFunctionGraph"):
    globals()[_name] = unsupported_class(_name, REWRITES)
del _name
