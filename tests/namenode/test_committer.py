"""AsyncCommitter: requests applied on the event loop, their syncs batched in one thread."""

import asyncio

import pytest

from namenode import errors
from namenode.committer import AsyncCommitter
from namenode.fsnamesystem import FSNamesystem

from tests.namenode.test_fsnamesystem import IDENTITY, USER, formatted, open_fs


async def _mkdirs_concurrently(fs: FSNamesystem, tasks: int, per_task: int) -> None:
    committer = AsyncCommitter(fs)
    caller = fs.caller(USER)

    async def worker(t: int) -> None:
        for i in range(per_task):
            assert await committer.mutate(fs.ns.mkdirs, f"/t{t}/d{i}", 0o755, caller) is True

    try:
        await asyncio.gather(*(worker(t) for t in range(tasks)))
    finally:
        committer.close()


def test_concurrent_requests_share_syncs_and_all_become_durable(tmp_path):
    dirs = formatted(tmp_path, 2)
    tasks, per_task = 16, 50
    with open_fs(dirs) as fs:
        asyncio.run(_mkdirs_concurrently(fs, tasks, per_task))
        total = tasks * per_task
        assert fs.journal.synced_txid == fs.journal.txid == total + 1
        assert fs.journal.metrics.syncs < total
    with open_fs(dirs) as fs:
        assert fs.ns.dirs == 1 + tasks * (per_task + 1)


def test_a_refused_request_raises_and_logs_nothing(tmp_path):
    dirs = formatted(tmp_path)

    async def scenario(fs):
        committer = AsyncCommitter(fs)
        caller = fs.caller(USER)
        try:
            await committer.mutate(fs.ns.mkdirs, "/a", 0o755, caller)
            with pytest.raises(errors.FileAlreadyExistsError):
                await committer.mutate(fs.ns.create, "/a", caller)
            assert await committer.mutate(fs.ns.mkdirs, "/a", 0o755, caller) is True
        finally:
            committer.close()

    with FSNamesystem.open(dirs, IDENTITY) as fs:
        asyncio.run(scenario(fs))
        assert fs.journal.txid == fs.journal.synced_txid == 2
