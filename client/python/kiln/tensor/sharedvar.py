"""Aesara's shared variables (aesara.tensor.sharedvar): variables whose value lives in this
process's session on the server, or in this process while local functions use them; a
function's updates replace them where they live. The session's client is handed to them by the
function that uploads them (they import nothing above this layer); kiln.shared makes them."""
import copy
import weakref

import numpy as np

from kiln import _pb, wire
from kiln.graph import TensorType
from kiln.tensor.variable import TensorVariable


class _Storage:
    """A shared variable's value: here (`value`), or in the session of `uploaded` (the client
    holding it). Aesara's container: a variable's clones share it."""

    __slots__ = ("value", "uploaded")


class SharedVariable(TensorVariable):
    """A variable whose value lives in the session (kiln.shared)."""

    _count = 0
    _live = weakref.WeakValueDictionary()  # session name -> variable, in this process

    def __init__(self, value, name=None, strict=False, shape=None, key=None):
        data = np.array(value)
        super().__init__(TensorType(data.dtype.name, shape or (None,) * data.ndim), name=name)
        self._storage = _Storage()
        self._value = data
        self._uploaded = None  # the client holding the value, once a function used it
        # A session name is part of the function id: "w_1" for the first, as in every process,
        # so that clients building the same functions share them; never one already taken here
        # (by a variable unpickled from another process).
        while key is None or key in SharedVariable._live:
            SharedVariable._count += 1
            key = "%s_%d" % (name or "shared", SharedVariable._count)
        self._key = key
        SharedVariable._live[key] = self
        self.default_update = None  # the value functions give it when no update is given

    _value = property(lambda self: self._storage.value,
                      lambda self, value: setattr(self._storage, "value", value))
    _uploaded = property(lambda self: self._storage.uploaded,
                         lambda self, client: setattr(self._storage, "uploaded", client))

    def clone(self, **kwargs):
        """Aesara's clone of a shared variable: another variable (named as this one, or
        `name=`) holding the same value: setting or updating either changes both."""
        cp = self.__class__.__new__(self.__class__)
        TensorVariable.__init__(cp, self.type, name=kwargs.get("name", self.name))
        cp._storage, cp._key, cp.default_update = self._storage, self._key, None
        if "_tag" in self.__dict__:
            cp.tag = copy.copy(self.tag)
        return cp

    def __reduce__(self):
        """Pickles the class, value, name, static shape and session name, then the rest of the
        variable (its tag, auto_name and default_update): unpickled in another process it keeps
        its session name (so functions over it keep their id), in this one it gets a new one (a
        copy, not an alias)."""
        state = self.__getstate__()
        for made in ("type", "owner", "index", "_name", "_storage", "_key"):
            state.pop(made, None)
        return (_restore_shared, (self.get_value(), self.name, self.type.shape, self._key,
                                  type(self)), state)

    def session_name(self):
        """The variable's name in the session: unique per shared variable."""
        return self._key

    def get_value(self, borrow=False):
        if self._uploaded is not None:
            req = _pb.service_pb2.GetSharedRequest(session=self._uploaded.session(),
                                                   name=self._key)
            return wire.tensor_from_proto(self._uploaded.call("GetShared", req).value)
        return self._value if borrow else self._value.copy()

    def set_value(self, value, borrow=False):
        data = self.type.filter(value, allow_downcast=False, name=str(self))
        self._value = data
        if self._uploaded is not None:
            self._upload(self._uploaded)

    def _hold_here(self):
        """Brings the value from the session into this process, for a local function, which
        then updates it here (a server function uploads it again before its next call)."""
        if self._uploaded is not None:
            self._value = self.get_value(borrow=True)
            self._uploaded = None

    def _upload(self, client):
        req = _pb.service_pb2.SetSharedRequest(session=client.session(), name=self._key)
        wire.tensor_to_proto(self._value, req.value)
        client.call("SetShared", req)
        self._uploaded = client


def _restore_shared(value, name, shape, key, cls=None):
    """An unpickled shared variable (of class cls, SharedVariable by default)."""
    v = SharedVariable.__new__(cls or SharedVariable)
    SharedVariable.__init__(v, value, name=name, shape=shape, key=key)
    return v
