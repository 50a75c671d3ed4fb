"""Where a compiled function's calls run: ServerRunner (each call an Execute, through this host's
shared-memory region when it can) or LocalRunner (the compiled function fetched once and run in
this process by kiln._core). Both compile through the server's Compile. kiln.compile's Function
holds one and knows only its interface (compile, run, fast, resident, call); this module sits
above compile, beside the client it uses, and gives compile its maker when it loads."""
import sys

import numpy as np

from kiln import _core, _pb, printing, wire
from kiln import lane as lane_module
from kiln.client import get_client, route_of_bytes
from kiln.compile import functions
from kiln.config import config
from kiln.errors import KilnError
from kiln.lane import LaneError, Outputs, _varint, parse_response
from kiln.shm import Resident


class _Runner:
    """What both runners share: the function, the client it compiles with, its route."""

    fast = None  # a call of plain arrays that needs nothing else here, when there is one

    def __init__(self, fn, client):
        self.fn = fn
        self.client = client
        # Every call of this function goes to one replica behind a front (its session's, or
        # its graph's: route_of's hash of its CompileRequest, taken at its first compile from
        # the bytes sent), which compiled it: it runs even while the replicas share no cache.
        self.route = None

    @staticmethod
    def is_resident(value):
        """Whether a call's value is a tensor resident on the server (kiln.resident)."""
        return isinstance(value, Resident)

    def call(self, method, request, route=None):
        """One RPC of this function's client (Print's text, the profile)."""
        return self.client.call(method, request, route=route)

    def _compile_response(self, return_stored):
        fn = self.fn
        fn._request.return_stored = return_stored
        body = fn._request.SerializeToString(deterministic=True)
        if self.route is None:
            self.route = route_of_bytes(body)
        resp = self.client.call_serialized("Compile", body, route=self.route)
        fn.function_id, fn.source, fn.signature = resp.function_id, resp.source, resp.signature
        return resp


class ServerRunner(_Runner):
    """Each call is an Execute on the server; the shared variables live in the session."""

    def __init__(self, fn, client):
        super().__init__(fn, client)
        if fn._shared:
            self.route = client.session()
        self.output_bytes = 0  # the outputs' bytes at the last call: room kept in the region
        self.fast = _lane_call(self)

    def compile(self):
        self._upload_shared()
        self._compile_response(False)

    def _upload_shared(self):
        """Gives the session the shared variables' values it does not hold (a local function
        may have changed them here)."""
        for s in self.fn._shared:
            if s._uploaded is not self.client:
                s._upload(self.client)

    def resident(self, value, inp):
        """A Resident given for `inp`, checked against its type; TypeError when it does not
        fit or lives on another server."""
        name = inp.name or inp.variable
        if value.client is not self.client:
            raise TypeError("%s: the resident tensor lives on %s, the function on %s"
                            % (name, value.client.address, self.client.address))
        t = inp.variable.type
        if value.dtype != t.dtype or value.ndim != t.ndim or any(
                d is not None and d != s for d, s in zip(t.shape, value.shape)):
            raise TypeError("%s: resident tensor of dtype %s and shape %s does not fit %s"
                            % (name, value.dtype, value.shape, t))
        return value

    def run(self, args):
        """The outputs (and states' next values) of one Execute: through the client's shared-
        memory region when the server is on this host (kiln.config.shm), else in messages."""
        req = _pb.service_pb2.ExecuteRequest()
        if self.fn._shared:
            req.session = self.client.session()
            self._upload_shared()
        channel = self.client.channel().borrow()
        try:
            if channel is not None:
                if not channel.fill(req, args, self.output_bytes):
                    channel.release()
                    channel = None
                else:
                    req.session = self.client.session()
            if channel is None:
                _args_to_messages(req, args)
            resp = self._execute(req, args, channel)
            if resp.printed or resp.printed_dropped:
                _show_printed(resp, self.fn)
            if req.HasField("output_region"):
                out = channel.outputs(resp)
            else:
                out = [wire.tensor_from_proto(t) for t in resp.outputs]
        finally:
            if channel is not None:
                channel.release()
        self.output_bytes = sum(o.nbytes + 64 for o in out)
        return out

    def _execute(self, req, args, channel):
        """Execute's response; compiles the function again if the server lost it, and sends
        the arguments in messages if it lost the region (the next call registers a new one)."""
        for attempt in range(3):
            req.function_id = self.fn.function_id
            shm = req.HasField("output_region")
            try:
                # A region lives on the replica of the session's calls.
                return self.client.call("Execute", req, route=req.session if shm else self.route)
            except KilnError as e:
                if attempt == 2:
                    raise
                if e.reason == "FUNCTION_NOT_FOUND":  # evicted or restarted: send the graph again
                    self.compile()
                elif not (shm and e.reason == "REGION_UNKNOWN"):
                    raise
                if shm:  # this call goes in messages to the function's replica
                    channel.forget()
                    _args_to_messages(req, args)


class LocalRunner(_Runner):
    """The compiled function fetched once (Compile's stored form) and run in this process; the
    shared variables' values are held here."""

    def compile(self):
        fn = self.fn
        try:
            self.executable = _core.Executable(self._compile_response(True).stored)
        except _core.CallError as e:
            raise KilnError(*e.args) from None
        self.has_print = self.executable.has_print
        if fn._all_plain and not fn._shared and not self.has_print and not fn._updated:
            self.executable.set_plain([(dtype.num, [dict(static).get(d, -1) for d in range(ndim)])
                                       for dtype, ndim, static in fn._plain],
                                      fn._single)
            self.fast = self.executable.call_plain

    def resident(self, value, inp):
        raise TypeError("%s: a resident tensor lives on the server; this function runs "
                        "locally (execute='local')" % (inp.name or inp.variable))

    def run(self, args):
        """The outputs (and states' next values) of one call in this process; the updates'
        values replace the shared variables' here."""
        fn = self.fn
        if fn._shared:
            for s in fn._shared:
                s._hold_here()
            args += [s._value for s in fn._shared]
        try:
            out = self.executable(args)
        except _core.CallError as e:
            raise KilnError(*e.args) from None
        if self.has_print:
            out, printed = out
            printing.show_printed(printed, 0, fn._printers)
        if fn._updated:
            n = len(out) - len(fn._updated)
            for s, value in zip(fn._updated, out[n:]):
                s._value = value
            del out[n:]
        return out


def _show_printed(resp, fn):
    """Shows the values fn's Print ops computed in the call that gave ExecuteResponse `resp`."""
    printing.show_printed([(p.message, p.attrs, wire.tensor_from_proto(p.value))
                           for p in resp.printed], resp.printed_dropped, fn._printers)


_SHAPES_KEPT = 64  # per input of a fast lane call, the shapes whose message heads are kept


def _lane_call(runner):
    """ServerRunner.fast: a call of arrays that fit the inputs as they are (their dtype, rank and
    static shape: what filtering would keep unchanged), for a function with no input that keeps
    a value and no shared variable, sent over the same-host lane without protobuf (fn(*args) in
    a loop is what a sampler does: protobuf's building and reading of the messages cost as much
    as the lane's round trip). Through the connection's ring, kiln._core.PlainLaneCall writes
    the ExecuteRequest into the ring's slot and reads the outputs from it, in C++; otherwise
    (no ring, an argument not in C order, a frame larger than the slot) the request is written
    here and its answer read by kiln.lane.Outputs.
    NotImplemented, before anything is sent, for any other call, a call the lane cannot take
    (gRPC then takes it) or one that moves enough bytes for the shared-memory region; and after
    an answer of FUNCTION_NOT_FOUND (it ran nowhere: the general path compiles again and
    retries). None when no call can take this path."""
    fn = runner.fn
    if (not runner.client._lane.usable or fn._states or fn._shared or fn._updated
            or sys.byteorder != "little" or any(c is not None for c in fn._containers)):
        return None
    # Per input: its dtype, rank, static shape, the dtype field of its Tensor message, and the
    # heads of its messages by shape: ExecuteRequest.args' tag and length, then the Tensor's
    # dtype, shape and the tag and length of its data, all but the data's bytes.
    specs = []
    for inp in fn.inputs:
        t = inp.variable.type
        specs.append((np.dtype(t.dtype), t.ndim, tuple(t.shape),
                      b"\x08" + _varint(wire.dtype_to_proto(t.dtype)), {}))
    n_inputs, single, native = len(specs), fn._single, wire._NATIVE
    function = [None, b""]  # the function id and ExecuteRequest.function_id's bytes
    outputs = Outputs()

    def head(spec, a):
        """The message head of array `a` for input `spec`, None when `a` does not fit it."""
        dtype, ndim, static, dtype_field, heads = spec
        if (type(a) is not np.ndarray or a.dtype != dtype or a.ndim != ndim
                or any(d is not None and d != s for d, s in zip(static, a.shape))):
            return None
        msg = dtype_field
        if ndim:
            dims = b"".join(_varint(d) for d in a.shape)
            msg += b"\x12" + _varint(len(dims)) + dims
        if a.nbytes:
            msg += b"\x1a" + _varint(a.nbytes)
        msg = b"\x1a" + _varint(len(msg) + a.nbytes) + msg
        if len(heads) >= _SHAPES_KEPT:
            heads.clear()
        heads[a.shape] = msg
        return msg

    # The call framed and read in C++ (kiln._core.PlainLaneCall) for C-ordered arrays of a
    # frame that fits the ring's slot; this module's framing for the others.
    kinds = [(dtype.num, wire.dtype_to_proto(dtype), [-1 if d is None else d for d in static])
             for dtype, _, static, _, _ in specs]
    plain = [None, None]  # the function id and its PlainLaneCall

    def call(args):
        lane = runner.client._lane
        if len(args) != n_inputs or not lane.usable:
            return NotImplemented
        if plain[0] is not fn.function_id:
            plain[:] = [fn.function_id, _core.PlainLaneCall(fn.function_id.encode(), kinds,
                                                           len(fn.outputs), single)]
        try:
            frame = lane.plain_call(plain[1], args, config.timeout)
            if frame is NotImplemented:
                frame = send(args)
            elif frame is not None and type(frame) is not bytes:
                runner.output_bytes = plain[1].output_bytes
                # The next calls from this thread go through its ring in C++ alone.
                whole.arm(plain[1], lane.thread_ring(), plain[0], lane)
                return frame  # the outputs, read in C++
        except LaneError as e:
            raise KilnError("UNAVAILABLE", str(e)) from None
        return finish_frame(frame)

    def finish(out):
        """The end of a call `whole` sent whose answer is not plain outputs (see plain_answer)."""
        try:
            frame = runner.client._lane.plain_answer(out)
        except LaneError as e:
            raise KilnError("UNAVAILABLE", str(e)) from None
        return finish_frame(frame)

    def broken(error):
        """Raises for a connection that broke during a call `whole` sent (OSError `error`)."""
        raise KilnError("UNAVAILABLE", str(runner.client._lane._broken(error))) from None

    def finish_frame(frame):
        if frame is None or frame is NotImplemented:
            return NotImplemented
        return answer(frame)

    def send(args):
        """The answer's frame to a call framed here; NotImplemented when it cannot go so."""
        client = runner.client
        if function[0] is not fn.function_id:
            fid = fn.function_id.encode()
            function[:] = [fn.function_id, b"\x0a" + _varint(len(fid)) + fid]
        # (The first part is the frame's head, which the lane writes.)
        parts, nbytes, size = [None, function[1]], 0, len(function[1])
        for a, spec in zip(args, specs):
            # A kept head: `a` has a shape that fitted; its dtype and type are checked here.
            msg = spec[4].get(a.shape) if type(a) is np.ndarray else None
            if msg is None or a.dtype != spec[0]:
                msg = head(spec, a)
                if msg is None:
                    return NotImplemented
            parts.append(msg)
            parts.append(a.tobytes())  # C order, native (little-endian) bytes
            nbytes += a.nbytes
            size += len(msg)
        if (nbytes + runner.output_bytes >= config.shm_min_bytes
                and client.channel().enabled):
            return NotImplemented  # the general path passes these through the region
        frame = client._lane.exchange(parts, size + nbytes, config.timeout)
        return NotImplemented if frame is None else frame

    def answer(frame):
        """The outputs in an answer's frame; NotImplemented when the call must be retried."""
        out = outputs(frame)  # the usual answer: outputs alone, read as the last one was
        if out is None:
            try:
                resp = parse_response(frame).execute
            except KilnError as e:
                if e.reason == "FUNCTION_NOT_FOUND":
                    return NotImplemented
                raise
            if resp.printed or resp.printed_dropped:
                _show_printed(resp, fn)
            # (wire.tensor_from_proto's arrays, read as this little-endian host's own dtypes.)
            out = [np.frombuffer(t.data, native[t.dtype]).reshape(tuple(t.shape)).copy()
                   for t in resp.outputs]
            runner.output_bytes = sum(o.nbytes for o in out) + 64 * len(out)
        else:
            runner.output_bytes = outputs.nbytes
        return out[0] if single else out

    # A call takes `call`'s Python path until one goes through the ring; then `whole` takes
    # that thread's calls in C++ alone, and hands any other to `call`.
    whole = _core.LaneFastCall(call, finish, broken, fn, runner, config, lane_module._IDLE_LOOK,
                               lane_module._AUTO_SPIN)
    return whole


def _args_to_messages(req, args):
    """Puts the arguments in req.args (a resident tensor by its handle), dropping any region
    references."""
    del req.args[:], req.arg_refs[:]
    req.ClearField("output_region")
    for k, data in enumerate(args):
        if isinstance(data, Resident):
            req.arg_refs.add(index=k, handle=data.handle)
        else:
            wire.tensor_to_proto(data, req.args.add())


def make_runner(fn, execute, client=None):
    """fn's runner: "server" or "local", compiling through `client` (the configured server's
    client when None)."""
    runner = (LocalRunner if execute == "local" else ServerRunner)(fn, client or get_client())
    runner.compile()
    return runner


functions.make_runner = make_runner
