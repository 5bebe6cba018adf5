"""WebHDFS query parameters, read as Hadoop's *Param classes read them.

An empty value is the default; numbers are plain decimal (``permission``: octal) within the
class's range; ``destination`` is absolute and normalised like Hadoop's Path; xattr values
decode as XAttrCodec does; required parameters are checked as
NamenodeWebHdfsMethods.validateOpParams does. Invariant: a bad value is refused with the
message Hadoop gives (a 400 BadRequest, or the IllegalArgument/IOException it raises), and
nothing here touches the namespace.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import TypeVar, overload

from nnlite.namenode import errors
from nnlite.namenode.blocks import checksum
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.http.wire import BadRequest, Request
from nnlite.namenode.namespace import acl
from nnlite.namenode.namespace.tree import XATTR_CREATE, XATTR_REPLACE

LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_OCTAL = re.compile(r"[+-]?[0-7]+")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
# What a parameter that was not sent reads as: a number, or None (then the caller decides).
Default = TypeVar("Default", bound=int | None)
CREATE_FLAGS = {"CREATE", "OVERWRITE", "APPEND", "SYNC_BLOCK", "LAZY_PERSIST", "NEW_BLOCK",
                "NO_LOCAL_WRITE", "SHOULD_REPLICATE", "IGNORE_CLIENT_LOCALITY",
                "NO_LOCAL_RACK"}


def param_bool(req: Request, name: str, default: bool = False) -> bool:
    value = req.param(name)
    if value is None or value == "":
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise BadRequest(400, f'Invalid value for webhdfs parameter "{name}": {value!r} is not '
                          'true or false')


def invalid_param(name: str, why: str) -> BadRequest:
    return BadRequest(400, f'Invalid value for webhdfs parameter "{name}": {why}')


def param_number(req: Request, name: str, default: Default, lo: int, hi: int,
                 pattern: re.Pattern[str] = _DECIMAL, radix: int = 10) -> int | Default:
    """LongParam/ShortParam: a blank value is the default; else digits (no '_', no spaces,
    ASCII only) in ``radix``, within [lo, hi]."""
    value = req.param(name)
    if value is None or not value.strip():
        return default
    if not pattern.fullmatch(value):
        kind = "an octal" if radix == 8 else "a decimal"
        raise invalid_param(name, f'Failed to parse "{value[:40]}" as {kind} integer')
    number = int(value, radix)
    if not lo <= number <= hi:
        shown = (lambda n: format(n, "o")) if radix == 8 else str
        raise invalid_param(name, f"Invalid parameter range: {name} = {value[:40]} is not within "
                             f"[{shown(lo)}, {shown(hi)}]")
    return number


@overload
def param_int(req: Request, name: str, default: int, lo: int = LONG_MIN,
              hi: int = LONG_MAX) -> int: ...


@overload
def param_int(req: Request, name: str, default: None = None, lo: int = LONG_MIN,
              hi: int = LONG_MAX) -> int | None: ...


def param_int(req: Request, name: str, default: int | None = None, lo: int = LONG_MIN,
              hi: int = LONG_MAX) -> int | None:
    return param_number(req, name, default, lo, hi)


def param_permission(req: Request, default: int) -> int:
    return param_number(req, "permission", default, 0, 0o1777, _OCTAL, 8)


def param_unmasked(req: Request) -> int | None:
    """UnmaskedPermissionParam: the mode before the client's umask, None when not sent."""
    return param_number(req, "unmaskedpermission", None, 0, 0o1777, _OCTAL, 8)


def param_aclspec(req: Request, with_permission: bool) -> list[tuple]:
    """AclPermissionParam: the value must match its domain pattern, then parses as
    ``AclEntry.parseAclSpec`` (REMOVEACLENTRIES's entries without permissions)."""
    value = req.param("aclspec") or ""
    if value and not acl.spec_matches(value):
        raise invalid_param("aclspec", f'Invalid value: "{value[:200]}" does not belong to the '
                                       f"domain {acl.SPEC_PATTERN}")
    return acl.parse_spec(value, with_permission)


def param_required(req: Request, name: str, op: str) -> str:
    value = req.param(name)
    if value is None or value == "":
        raise errors.IllegalArgumentError(
            f"Required param {name} for op: {op} is null or empty")
    return value


def param_destination(req: Request) -> str:
    """DestinationParam: absolute, then what Hadoop's Path makes of it."""
    value = param_required(req, "destination", "RENAME")
    if not value.startswith("/"):
        raise errors.IllegalArgumentError(
            f'Invalid parameter value: destination = "{value[:200]}" is not an absolute path.')
    return hadoop_path(value)


def hadoop_path(path: str) -> str:
    """``new Path(s).toUri().getPath()`` for an absolute ``s``: repeated slashes collapse, a
    trailing slash goes, "." and ".." segments resolve (a ".." above the root stays and is
    then refused as an invalid name, as the NameNode does)."""
    if "//" not in path and "/." not in path and (len(path) == 1 or path[-1] != "/"):
        return path
    out: list[str] = []
    for part in path.split("/"):
        if part == ".." and out and out[-1] != "..":
            out.pop()
        elif part and part != ".":
            out.append(part)
    return "/" + "/".join(out)


# --------------------------------------------------------------------------- xattrs

def param_xattr_value(text: str | None) -> bytes:
    """Hadoop's XAttrCodec.decodeValue: "..." text, 0x.. hex, 0s.. base64, else the raw
    text; no value (or an empty one) is an empty value. Bad hex is an IOException there."""
    if not text:
        return b""
    if len(text) >= 2:
        if text[0] == '"' and text[-1] == '"':
            return text[1:-1].encode()
        prefix = text[:2].lower()
        if prefix == "0x":
            if not (text.isascii() and _HEX.fullmatch(text, 2)):
                raise errors.NamenodeError(
                    "org.apache.commons.codec.DecoderException: Illegal hexadecimal value "
                    f"{text[:40]!r} (odd length or a character outside 0-9a-f)")
            return binascii.unhexlify(text[2:])
        if prefix == "0s":
            return lenient_base64(text[2:])
    return text.encode()


def lenient_base64(text: str) -> bytes:
    """commons-codec's Base64.decode: characters outside the alphabet (standard or URL-safe)
    are skipped, '=' ends the data, a partial last quantum decodes as far as it goes."""
    chars = "".join(c for c in text.split("=", 1)[0] if c.isascii() and (c.isalnum()
                                                                           or c in "+/-_"))
    chars = chars.translate(str.maketrans("-_", "+/"))
    if len(chars) % 4 == 1:
        chars = chars[:-1]
    return base64.b64decode(chars + "=" * (-len(chars) % 4))


def param_encoding(req: Request) -> str:
    encoding = param_required(req, "encoding", "GETXATTRS").upper()
    if encoding not in ("TEXT", "HEX", "BASE64"):
        raise invalid_param("encoding", f"No enum constant org.apache.hadoop.fs.XAttrCodec."
                                   f"{encoding[:40]}")
    return encoding


def param_xattr_flag(req: Request) -> int:
    """XAttrSetFlagParam ("flag"): a comma-separated set of CREATE and REPLACE, required."""
    text = param_required(req, "flag", "SETXATTR")
    flags = {"CREATE": XATTR_CREATE, "REPLACE": XATTR_REPLACE}
    bits = 0
    for name in text.split(","):
        flag = flags.get(name.strip().upper())
        if flag is None:
            raise invalid_param("flag", f"No enum constant org.apache.hadoop.fs.XAttrSetFlag."
                                   f"{name.strip().upper()[:40]}")
        bits |= flag
    return bits


# --------------------------------------------------------------------------- the data path

@dataclass(frozen=True)
class CreateOptions:
    overwrite: bool
    create_parent: bool
    permission: int
    replication: int
    block_size: int
    unmasked: int | None = None

    def namespace_kw(self) -> dict:
        return {"overwrite": self.overwrite, "create_parent": self.create_parent,
                "permission": self.permission, "replication": self.replication,
                "block_size": self.block_size, "unmasked": self.unmasked}


def create_options(req: Request, fs: FSNamesystem) -> CreateOptions:
    """CREATE's parameters as Hadoop's Param classes read them; ``createflag`` (sent by
    createNonRecursive) decides ``overwrite`` when it is given."""
    overwrite = param_bool(req, "overwrite")
    flags = {f.strip().upper() for f in (req.param("createflag") or "").split(",") if f.strip()}
    if flags - CREATE_FLAGS:
        raise BadRequest(400, f'Invalid value for webhdfs parameter "createflag": '
                              f"{sorted(flags - CREATE_FLAGS)}")
    if "APPEND" in flags:
        raise errors.UnsupportedOperationError("createflag APPEND is not supported: use "
                                               "op=APPEND to append to a file")
    if flags:
        overwrite = "OVERWRITE" in flags
    block_size = param_int(req, "blocksize", None, 1)
    block_size = fs.block_size if block_size is None else block_size
    if block_size % checksum.BYTES_PER_CRC:
        raise errors.IllegalArgumentError(
            f"Invalid values: dfs.bytes-per-checksum (={checksum.BYTES_PER_CRC}) must divide "
            f"block size (={block_size}).")
    replication = param_int(req, "replication", None, 1, 32767)
    param_int(req, "buffersize", None, 1, (1 << 31) - 1)
    return CreateOptions(overwrite, param_bool(req, "createparent", True),
                         param_permission(req, 0o644),
                         fs.default_replication if replication is None else replication,
                         block_size, param_unmasked(req))


def offset_length(req: Request) -> tuple[int, int | None]:
    return param_int(req, "offset", 0, 0), param_int(req, "length", None, 0)
