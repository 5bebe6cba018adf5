"""catalog/snapshot_zip.py: a snapshot unzipped as java.util.zip.ZipInputStream unzips it --
entries walked from their local headers (with and without data descriptors), each inflated
and checked against its CRC-32 and sizes, the central directory never read."""

from __future__ import annotations

import io
import zipfile

import pytest

from nnlite.catalog.snapshot_zip import SnapshotZipError, verify

FILES = {"metadata": b'{"sstFiles":[]}' * 20, "000008.log": bytes(range(256)) * 8,
         "OPTIONS-000007": b"[Version]\n" * 50}


class Unseekable(io.RawIOBase):
    """A stream zipfile cannot seek: it writes data descriptors, as ZipOutputStream does."""

    def __init__(self) -> None:
        self.out = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.out += b
        return len(b)


def snapshot(descriptors: bool = True, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    target = Unseekable() if descriptors else io.BytesIO()
    with zipfile.ZipFile(target, "w", method) as z:
        for name, data in FILES.items():
            z.writestr(name, data)
    return bytes(target.out) if descriptors else target.getvalue()


@pytest.mark.parametrize("descriptors,method", [(True, zipfile.ZIP_DEFLATED),
                                                (False, zipfile.ZIP_DEFLATED),
                                                (False, zipfile.ZIP_STORED)])
def test_a_whole_snapshot_unzips_entry_by_entry(descriptors, method):
    """ZipOutputStream's DEFLATED entries carry data descriptors; its STORED ones cannot."""
    data = snapshot(descriptors, method)
    assert verify(data, "4_a.zip") == list(FILES)


def test_a_stored_entry_with_a_descriptor_is_refused_as_java_refuses_it():
    with pytest.raises(SnapshotZipError, match="only DEFLATED entries"):
        verify(snapshot(True, zipfile.ZIP_STORED), "z")


def test_a_changed_byte_in_an_entry_fails_as_zip_input_stream_fails():
    data = bytearray(snapshot())
    at = data.index(b"PK\x03\x04", 4) - 30           # inside the first entry's data
    data[at] ^= 0x01
    with pytest.raises(SnapshotZipError, match="4_a.zip: entry metadata"):
        verify(bytes(data), "4_a.zip")


def test_the_central_directory_is_never_read():
    """A change there passes Spark's unzip (it reads local headers only), so it passes."""
    data = bytearray(snapshot())
    central = data.index(b"PK\x01\x02")
    data[central + 20] ^= 0xFF                       # a size in the directory
    assert verify(bytes(data), "z") == list(FILES)


def test_entries_that_end_before_the_central_directory_or_a_cut_zip():
    data = bytearray(snapshot())
    second = data.index(b"PK\x03\x04", 4)
    data[second] = ord("Q")                          # the second local header's signature
    with pytest.raises(SnapshotZipError, match="before the central directory"):
        verify(bytes(data), "z")
    whole = snapshot()
    with pytest.raises(SnapshotZipError):
        verify(whole[:len(whole) // 2], "z")
