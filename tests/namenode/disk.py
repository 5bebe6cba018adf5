"""A real small file system for the disk-fault tests: a tmpfs mounted for one test (root
only; otherwise the test is skipped and says why), filled to the last byte and freed again."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest


class SmallDisk:
    def __init__(self, path: Path, size: str):
        self.path = path
        self.size = size
        self.filler = path / "filler"

    def mount(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs to fill needs root; run the suite as root")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs",
                               str(self.path)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], capture_output=True)

    def fill(self, leave: int = 0) -> None:
        """Write the filler until the file system is full, then give back ``leave`` bytes."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for size in (65536, 4096, 512, 1):
                while True:
                    try:
                        if os.write(fd, b"\xa5" * size) == 0:
                            break
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise
                        break
        finally:
            os.close(fd)
        if leave:
            os.truncate(self.filler, max(0, self.filler.stat().st_size - leave))

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def available(self) -> int:
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize
