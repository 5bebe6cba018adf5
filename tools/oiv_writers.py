"""The text renderings of ``oiv``: Delimited (Hadoop's columns), JSON and XML (every column).

Each writer gets ``begin(meta)``, then ``write(batch, paths)`` per record batch (a path of None
is an inode left out), then ``end()``. ``columns`` names the columns it needs (None: all).
"""

from __future__ import annotations

import json
import time

import pyarrow as pa
import pyarrow.compute as pc

from nnlite.formats.fsimage.layout import TYPE_DIRECTORY, TYPE_FILE, ImageMeta
from nnlite.namenode.image import secrets
from nnlite.tools.render import xml_attr, xml_safe, xml_text

PATH_CACHE = 1 << 16
DELIMITED_HEADER = ("Path", "Replication", "ModificationTime", "AccessTime",
                    "PreferredBlockSize", "BlocksCount", "FileSize", "NSQUOTA", "DSQUOTA",
                    "Permission", "UserName", "GroupName")
TYPE_NAMES = {TYPE_DIRECTORY: "DIRECTORY", TYPE_FILE: "FILE"}


class TimeFormat:
    """ms since the epoch -> ``yyyy-MM-dd HH:mm`` in local time, cached per minute."""

    def __init__(self):
        self._cache: dict[int, str] = {}

    def __call__(self, ms: int) -> str:
        text = self._cache.get(ms // 60000)
        return text if text is not None else self._format(ms)

    def _format(self, ms: int) -> str:
        try:
            local = time.localtime(ms // 1000)
        except (OverflowError, OSError, ValueError):
            return str(ms)
        text = time.strftime("%Y-%m-%d %H:%M", local)
        if local.tm_gmtoff % 60 == 0:  # a whole-minute offset: one text per UTC minute
            if len(self._cache) >= PATH_CACHE:
                self._cache.clear()
            self._cache[ms // 60000] = text
        return text


def symbolic(mode: int) -> str:
    """``rwxr-xr-x`` as Hadoop's FsPermission.toString (sticky: ``t``, or ``T`` without o+x)."""
    chars = [c if mode & bit else "-"
             for bit, c in zip((0o400, 0o200, 0o100, 0o40, 0o20, 0o10, 0o4, 0o2, 0o1),
                               "rwxrwxrwx", strict=True)]
    if mode & 0o1000:
        chars[8] = "t" if mode & 0o1 else "T"
    return "".join(chars)


PERMISSIONS = tuple(symbolic(mode) for mode in range(0o10000))


class DelimitedWriter:
    columns = ("id", "parent_id", "name", "type", "permission", "owner", "group", "mtime",
               "atime", "replication", "block_size", "length", "blocks", "ns_quota", "ss_quota",
               "snapshot")

    def __init__(self, out, options):  # options: tools.oiv.OivOptions
        self.out = out
        self.d = options.separator
        self.header = options.header
        self.time = TimeFormat()

    def begin(self, meta: ImageMeta) -> None:
        if self.header:
            self.out.write(self.d.join(DELIMITED_HEADER) + "\n")

    def write(self, batch: pa.RecordBatch, paths: list[str | None]) -> None:
        d, fmt, perms = self.d, self.time, PERMISSIONS
        names = ("type", "permission", "owner", "group", "mtime", "atime", "replication",
                 "block_size", "length", "ns_quota", "ss_quota")
        columns = [batch.column(n).to_pylist() for n in names]
        counts = pc.list_value_length(batch.column("blocks")).to_pylist()
        lines = []
        for path, typ, perm, own, grp, mt, at, rep, bs, ln, nsq, ssq, nb in zip(
                paths, *columns, counts, strict=True):
            if not path:            # None: no path; "": only a snapshot keeps it
                continue
            if typ == TYPE_DIRECTORY:
                lines.append(f"{path}{d}0{d}{fmt(mt)}{d}{fmt(at)}{d}0{d}0{d}0{d}{nsq}{d}{ssq}"
                             f"{d}d{perms[perm & 0o7777]}{d}{own}{d}{grp}")
            else:
                lines.append(f"{path}{d}{rep}{d}{fmt(mt)}{d}{fmt(at)}{d}{bs}{d}{nb}{d}{ln}{d}0"
                             f"{d}0{d}-{perms[perm & 0o7777]}{d}{own}{d}{grp}")
        if lines:
            self.out.write("\n".join(lines))
            self.out.write("\n")

    def end(self) -> None:
        pass


def meta_record(meta: ImageMeta) -> dict:
    """The footer; a secure namenode's delegation keys and tokens (``secret_manager``) with
    every field but the keys' secrets, as Hadoop's oiv prints a SecretManagerSection."""
    record = {"layout_version": meta.layout_version, "namespace_id": meta.namespace_id,
              "last_txid": meta.last_txid, "inode_count": meta.inode_count,
              "creation_time": meta.creation_time, "extra": dict(sorted(meta.extra.items()))}
    if secrets.SECTION in meta.sections:
        record[secrets.SECTION] = secrets.summary(meta.sections[secrets.SECTION])
    return record


def inode_record(path: str, row: dict) -> dict:
    """One inode with every column, in schema order after its path."""
    record = {"path": path, **row}
    record["type"] = TYPE_NAMES.get(row["type"], row["type"])
    record["permission"] = f"{row['permission']:04o}"
    checksum = row["checksum"]
    record["checksum"] = None if checksum is None else checksum.hex()
    xattrs = row["xattrs"]
    record["xattrs"] = None if xattrs is None else {k: v.hex() for k, v in xattrs}
    return record


class JsonWriter:
    columns = None

    def __init__(self, out, options):  # options: tools.oiv.OivOptions
        self.out = out
        self._separator = ""

    def begin(self, meta: ImageMeta) -> None:
        self.out.write('{"meta": ' + json.dumps(meta_record(meta)) + ',\n"inodes": [\n')

    def write(self, batch: pa.RecordBatch, paths: list[str | None]) -> None:
        dumps, parts = json.dumps, []
        for path, row in zip(paths, batch.to_pylist(), strict=True):
            if path:
                record = inode_record(path, row)
                if record.get("snapshot") is not None:     # the cell is JSON: nest it
                    record["snapshot"] = json.loads(record["snapshot"])
                parts.append(dumps(record, ensure_ascii=False))
        if parts:
            self.out.write(self._separator + ",\n".join(parts))
            self._separator = ",\n"

    def end(self) -> None:
        self.out.write("\n]}\n" if self._separator else "]}\n")


def _secret_manager_xml(section: dict) -> str:
    """``<secret_manager current_key_id= sequence_number=>`` with a ``<key/>`` per master
    key (no secret) and a ``<token/>`` per live token."""
    def attrs(record: dict) -> str:
        return " ".join(f"{k}={xml_attr(str(v))}" for k, v in record.items())
    keys = "".join(f"<key {attrs(k)}/>" for k in section["keys"])
    tokens = "".join(f"<token {attrs(t)}/>" for t in section["tokens"])
    head = {k: v for k, v in section.items() if k not in ("keys", "tokens")}
    return f"<{secrets.SECTION} {attrs(head)}>{keys}{tokens}</{secrets.SECTION}>"


ITEM_TAGS = {"acl": "entry"}    # a list's item tag, where it is not the list's minus its "s"


def xml_element(tag: str, value) -> str:
    """``<tag>value</tag>``; nothing for None; lists of dicts and dicts nest."""
    if value is None:
        return ""
    if isinstance(value, list):
        item = ITEM_TAGS.get(tag, tag[:-1])
        inner = "".join(xml_element(item, v) for v in value)
        return f"<{tag}>{inner}</{tag}>"
    if isinstance(value, dict):
        inner = "".join(xml_element(k, v) for k, v in value.items())
        return f"<{tag}>{inner}</{tag}>"
    if isinstance(value, str):
        if not xml_safe(value):
            hexed = value.encode("utf-8", "surrogatepass").hex()
            return f'<{tag} encoding="hex">{hexed}</{tag}>'
        return f"<{tag}>{xml_text(value)}</{tag}>"
    return f"<{tag}>{value}</{tag}>"


class XmlWriter:
    columns = None

    def __init__(self, out, options):  # options: tools.oiv.OivOptions
        self.out = out

    def begin(self, meta: ImageMeta) -> None:
        record = meta_record(meta)
        extra = record.pop("extra")
        section = record.pop(secrets.SECTION, None)
        attrs = " ".join(f"{k}={xml_attr(str(v))}" for k, v in record.items())
        extras = "".join(f"<extra name={xml_attr(k)} value={xml_attr(str(v))}/>"
                         for k, v in extra.items())
        if section is not None:
            extras += _secret_manager_xml(section)
        self.out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<fsimage>\n'
                       f"<meta {attrs}>{extras}</meta>\n<inodes>\n")

    def write(self, batch: pa.RecordBatch, paths: list[str | None]) -> None:
        parts = []
        for path, row in zip(paths, batch.to_pylist(), strict=True):
            if path:
                record = inode_record(path, row)
                if record["xattrs"] is not None:
                    record["xattrs"] = [{"name": k, "value": v}
                                        for k, v in record["xattrs"].items()]
                parts.append(xml_element("inode", record))
        if parts:
            self.out.write("\n".join(parts) + "\n")

    def end(self) -> None:
        self.out.write("</inodes>\n</fsimage>\n")


WRITERS = {"Delimited": DelimitedWriter, "JSON": JsonWriter, "XML": XmlWriter}
