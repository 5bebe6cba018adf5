"""Protobuf message classes from field tables written like ``.proto`` lines, and the
varint-delimited framing Hadoop's protocols use.

Hadoop's protocols (IPC, ClientNamenodeProtocol, data transfer) are proto2. Their field
numbers, types and labels are the wire contract; names are not, so every message and enum of
this project's schemas is top level (Hadoop nests some, such as
``RpcResponseHeaderProto.RpcStatusProto``). A schema is declared in Python::

    S = Schema("nnlite.hadoop.ipc")
    RpcKind = S.enum("RpcKindProto", RPC_BUILTIN=0, RPC_WRITABLE=1, RPC_PROTOCOL_BUFFER=2)
    S.message("RpcRequestHeaderProto",
              "optional RpcKindProto rpcKind = 1",
              "required sint32 callId = 3",
              "optional sint32 retryCount = 5 [default = -1]")
    RpcRequestHeaderProto = S.build()["RpcRequestHeaderProto"]

and built into classes of Google's ``protobuf`` runtime (``descriptor_pool`` and
``message_factory``): no generated code and no ``protoc``. A schema may use the messages and
enums of schemas built before it (``Schema(..., uses=[other])``).

Framing (``CodedOutputStream.writeDelimitedTo`` in Java): a message is preceded by its length
as a base-128 varint.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from nnlite.formats.errors import FormatError

_F = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    "double": _F.TYPE_DOUBLE, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64, "int32": _F.TYPE_INT32, "fixed64": _F.TYPE_FIXED64,
    "fixed32": _F.TYPE_FIXED32, "bool": _F.TYPE_BOOL, "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES, "uint32": _F.TYPE_UINT32, "sfixed32": _F.TYPE_SFIXED32,
    "sfixed64": _F.TYPE_SFIXED64, "sint32": _F.TYPE_SINT32, "sint64": _F.TYPE_SINT64,
}
LABELS = {"optional": _F.LABEL_OPTIONAL, "required": _F.LABEL_REQUIRED,
          "repeated": _F.LABEL_REPEATED}
_LINE = re.compile(r"^\s*(optional|required|repeated)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*"
                   r"(?:\[\s*(packed\s*=\s*true|default\s*=\s*([^\]]+?))\s*\])?\s*$")
_POOL = descriptor_pool.DescriptorPool()     # this project's own: never the default pool


class ProtoError(FormatError):
    """A message that does not parse, or a frame cut short."""


class Schema:
    """The messages and enums of one protobuf package (one file descriptor)."""

    def __init__(self, package: str, uses: list[Schema] | tuple[Schema, ...] = ()) -> None:
        self.package = package
        self.uses = list(uses)
        self.file: descriptor_pb2.FileDescriptorProto = descriptor_pb2.FileDescriptorProto(
            name=package.replace(".", "/") + ".proto", package=package, syntax="proto2",
            dependency=[u.file.name for u in self.uses])
        self._enums: set[str] = set()
        self._messages: set[str] = set()
        self.classes: dict[str, Any] = {}

    def enum(self, name: str, **values: int) -> SimpleNamespace:
        """Declare enum ``name``; returns its values as attributes (``Status.SUCCESS``).
        Protobuf scopes enum values in their package, and Hadoop repeats names such as
        SUCCESS across the enums it nests, so in the descriptor each value is named
        ``<enum>_<value>``; on the wire only the numbers count."""
        e = self.file.enum_type.add(name=name)
        for key, number in values.items():
            e.value.add(name=f"{name}_{key}", number=number)
        self._enums.add(name)
        return SimpleNamespace(**values)

    def message(self, name: str, *fields: str) -> None:
        m = self.file.message_type.add(name=name)
        self._messages.add(name)
        for line in fields:
            match = _LINE.match(line)
            if match is None:
                raise ValueError(f"{name}: cannot read field {line!r}")
            label, kind, field, number, option, default = match.groups()
            f = m.field.add(name=field, number=int(number), label=LABELS[label])
            if kind in SCALARS:
                f.type = SCALARS[kind]
            else:
                owner = self._owner(kind)
                f.type_name = f".{owner.package}.{kind}"
                f.type = _F.TYPE_ENUM if kind in owner._enums else _F.TYPE_MESSAGE
            if option and option.startswith("packed"):
                f.options.packed = True
            elif default is not None:
                f.default_value = default.strip().strip('"')

    def _owner(self, kind: str) -> Schema:
        if kind in self._enums or kind in self._messages:
            return self
        for schema in self.uses:
            if kind in schema._enums or kind in schema._messages:
                return schema
        # declared later in this schema (messages may refer forwards)
        return self

    def build(self) -> dict[str, Any]:
        """Add the file to the pool and return its message classes by name."""
        # enums declared after a message that uses them: fix the field types now
        for m in self.file.message_type:
            for f in m.field:
                if f.type_name:
                    kind = f.type_name.rsplit(".", 1)[1]
                    f.type = _F.TYPE_ENUM if kind in self._owner(kind)._enums \
                        else _F.TYPE_MESSAGE
                    f.type_name = f".{self._owner(kind).package}.{kind}"
                    if f.type == _F.TYPE_ENUM and f.default_value \
                            and not f.default_value.startswith(kind + "_"):
                        f.default_value = f"{kind}_{f.default_value}"
        _POOL.Add(self.file)
        file = _POOL.FindFileByName(self.file.name)
        self.classes = {name: message_factory.GetMessageClass(d)
                        for name, d in file.message_types_by_name.items()}
        return self.classes

    def __getitem__(self, name: str) -> Any:
        return self.classes[name]


# ------------------------------------------------------------------ varint framing

_ONE_BYTE = tuple(bytes((n,)) for n in range(0x80))     # every varint under 128, made once


def varint(n: int) -> bytes:
    """``n`` (unsigned) as a base-128 varint."""
    if 0 <= n < 0x80:           # lengths and small numbers: most of what a frame holds
        return _ONE_BYTE[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_varint(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int]:
    """The varint at ``offset`` and the offset after it; ProtoError if cut short or longer
    than 10 bytes."""
    if offset < len(data) and data[offset] < 0x80:      # one byte: every length under 128
        return data[offset], offset + 1
    result = shift = 0
    for i in range(offset, min(len(data), offset + 10)):
        byte = data[i]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i + 1
        shift += 7
    raise ProtoError("a varint is cut short or longer than 10 bytes")


def delimited(*messages: Any) -> bytes:
    """Each message preceded by its length (``writeDelimitedTo``)."""
    out = bytearray()
    for message in messages:
        body = message.SerializeToString()
        out += varint(len(body))
        out += body
    return bytes(out)


def parse(cls: Any, data: bytes | bytearray | memoryview) -> Any:
    """``cls`` parsed from ``data``; ProtoError (one line) if it does not parse or lacks a
    required field."""
    message = cls()
    try:
        message.ParseFromString(data)
    except Exception as exc:     # the runtime's DecodeError
        raise ProtoError(f"malformed {cls.DESCRIPTOR.name}: {exc}") from None
    if not message.IsInitialized():
        raise ProtoError(f"malformed {cls.DESCRIPTOR.name}: required "
                         f"{', '.join(message.FindInitializationErrors())} missing")
    return message


def parse_delimited(cls: Any, data: bytes | bytearray | memoryview,
                    offset: int = 0) -> tuple[Any, int]:
    """The length-delimited ``cls`` at ``offset`` and the offset after it."""
    length, start = read_varint(data, offset)
    end = start + length
    if end > len(data):
        raise ProtoError(f"{cls.DESCRIPTOR.name} of {length} bytes is cut short "
                         f"({len(data) - start} present)")
    return parse(cls, data[start:end]), end
