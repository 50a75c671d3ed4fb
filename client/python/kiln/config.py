"""kiln.config: where the server is, and Aesara's floatX."""
import os


class _Config:
    def __init__(self):
        # host:port of the Kiln server (environment KILN_SERVER).
        self.server = os.environ.get("KILN_SERVER", "localhost:50051")
        # The dtype of the unprefixed constructors (vector, matrix...), as Aesara's floatX.
        self.floatX = "float64"
        # Aesara's config.profile: functions record per-node times (fn.profile.summary()).
        self.profile = False
        # Where compiled functions run: "server" (each call is an Execute) or "local" (the
        # server compiles and caches the function, this process fetches it once and runs it,
        # shared variables held here). A Mode's `execute` overrides it (environment
        # KILN_EXECUTE).
        self.execute = os.environ.get("KILN_EXECUTE", "server")
        # Same-host shared memory for calls run on the server: "auto" uses it when the server's
        # address is a loopback one and the server can open this process's region, "on"
        # always (an error when it cannot), "off" never (environment KILN_SHM).
        self.shm = os.environ.get("KILN_SHM", "auto")
        # Calls moving fewer bytes than this (arguments, and outputs at the function's last
        # call) go in messages even so: for them a region costs more than it saves
        # (environment KILN_SHM_MIN_BYTES).
        self.shm_min_bytes = int(os.environ.get("KILN_SHM_MIN_BYTES", 32768))
        # The same-host lane for calls run on the server: "auto" sends Execute over the server's
        # Unix socket (GetVersion.local_socket) when this process can reach it and it is the
        # server's own, "on" always (an error when it cannot), "off" never: gRPC only
        # (environment KILN_LANE).
        self.lane = os.environ.get("KILN_LANE", "auto")
        # Seconds a lane call polls for its answer before its thread sleeps until the answer
        # comes: a call answered sooner pays no wake-up of this thread, at the price of its
        # core while it waits (kiln.lane; environment KILN_LANE_SPIN; 0: sleep at once). None,
        # the default: 100 µs through the ring (its spins back off after misses); over the
        # socket alone, 100 µs while the machine has a core to spare (the 1-minute load
        # average, looked at each second, under this process's cores less one half), else 0.
        # Whether a lane connection asks the server for a shared-memory ring (proto/lane/ring.h:
        # the calls' frames then pass through shared memory, with no system call while both
        # sides spin; environment KILN_LANE_RING=0 turns it off).
        self.lane_ring = os.environ.get("KILN_LANE_RING", "1") != "0"
        spin = os.environ.get("KILN_LANE_SPIN")
        self.lane_spin = None if spin is None else float(spin)
        # Seconds a call may take before it is DEADLINE_EXCEEDED; None waits.
        self.timeout = None
        # The bearer token the server's --auth_tokens knows (environment KILN_TOKEN).
        self.token = os.environ.get("KILN_TOKEN") or None
        # TLS: the CA that signed the server's certificate (a PEM file; environment KILN_TLS_CA),
        # and for mutual TLS this client's certificate and key (KILN_TLS_CERT, KILN_TLS_KEY).
        # With none of them the connection is plaintext.
        self.tls_ca = os.environ.get("KILN_TLS_CA") or None
        self.tls_cert = os.environ.get("KILN_TLS_CERT") or None
        self.tls_key = os.environ.get("KILN_TLS_KEY") or None

    # Aesara's config.compute_test_value: test values are never computed ("off", Aesara 2.9's
    # default); a variable's tag.test_value is only kept (and checked against its type).
    @property
    def compute_test_value(self):
        return "off"

    @compute_test_value.setter
    def compute_test_value(self, value):
        if value == "off":
            return
        if value in _TEST_VALUE_MODES:
            raise NotImplementedError(
                "Kiln does not support test values: config.compute_test_value can only be "
                "'off' (Aesara's default), not %r; evaluate a graph with eval() or a compiled "
                "function instead" % (value,))
        raise ValueError("Invalid value (%r) for configuration variable 'compute_test_value'. "
                         "Valid options are %s" % (value, _TEST_VALUE_MODES))


# Aesara's values of compute_test_value ("off" is the only one Kiln takes).
_TEST_VALUE_MODES = ("off", "ignore", "warn", "raise", "pdb")

config = _Config()
