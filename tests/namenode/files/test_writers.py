"""A writer's close (namenode/files/writers.py): where its checksum is computed, and what
it records either way."""

from __future__ import annotations

import asyncio
import threading

import pytest

from nnlite.namenode.blocks import checksum
from nnlite.namenode.files.writers import Closing, close_file, start_file
from nnlite.namenode.namespace import leases
from tests.namenode.helpers import formatted, open_fs

DIGEST = checksum.block_digest(checksum.chunk_crcs(b"x" * 700))
OLD = checksum.file_checksum([DIGEST])


def closing(node=None, holder="", *, kept=(), kept_checksum=None, new=((7, 700, 1),),
            known=True, threads=None) -> Closing:
    def new_digests():
        if threads is not None:
            threads.append(threading.current_thread())
        return [DIGEST] * len(new)
    return Closing(node, holder, kept, kept_checksum, new, new_digests, 700, bool(kept),
                   digests_known=known)


@pytest.mark.parametrize(("case", "in_memory"), [
    (dict(), True),                                        # a new file: nothing to read
    (dict(known=False), False),                            # a digest the store must read
    (dict(kept=((3, 700, 1),)), False),                    # an append: the kept digests read
    (dict(kept=((3, 700, 1),), kept_checksum=OLD, new=()), True),   # nothing added
    (dict(kept=((3, 700, 1),), kept_checksum=None, new=()), False),
], ids=["new-file", "digest-unknown", "append", "append-nothing", "append-no-checksum"])
def test_a_close_reads_nothing_only_when_every_digest_is_at_hand(case, in_memory):
    assert closing(**case).in_memory is in_memory


@pytest.mark.parametrize("known", [True, False], ids=["on-the-loop", "in-a-thread"])
def test_a_close_records_the_same_checksum_on_the_loop_or_in_a_thread(tmp_path, store, known):
    fs = open_fs(formatted(tmp_path))
    table = leases.LeaseManager()
    threads: list[threading.Thread] = []
    try:
        lease, logged = start_file(fs, table, "/f", "root", "127.0.0.1")
        fs.durable(logged)

        async def close():
            done = await close_file(fs, store, closing(logged.value, lease.holder,
                                                       known=known, threads=threads))
            return threading.current_thread(), done
        loop_thread, done = asyncio.run(close())
        fs.durable(done)
        assert (threads[0] is loop_thread) is known
        node = fs.ns.tree.get_file("/f")
        assert not node.under_construction
        assert (node.length, node.checksum) == (700, OLD)
    finally:
        fs.close()
