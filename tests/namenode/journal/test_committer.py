"""AsyncCommitter: requests applied on the event loop (FSNamesystem's writes), their syncs
batched in one thread."""

import asyncio

import pytest

from nnlite.namenode import errors
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.journal.committer import AsyncCommitter
from tests.namenode.helpers import IDENTITY, USER, formatted, open_fs


async def _mkdirs_concurrently(fs: FSNamesystem, tasks: int, per_task: int) -> None:
    committer = fs.async_committer()

    async def worker(t: int) -> None:
        for i in range(per_task):
            assert await committer.wait(fs.mkdirs(f"/t{t}/d{i}", 0o755, USER)) is True

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
        assert fs.ns.tree.dirs == 1 + tasks * (per_task + 1)


def test_a_refused_request_raises_and_logs_nothing(tmp_path):
    dirs = formatted(tmp_path)

    async def scenario(fs):
        committer = fs.async_committer()
        try:
            await committer.wait(fs.mkdirs("/a", 0o755, USER))
            with pytest.raises(errors.FileAlreadyExistsError):
                await committer.wait(fs.create("/a", USER))
            assert await committer.wait(fs.mkdirs("/a", 0o755, USER)) is True
        finally:
            committer.close()

    with FSNamesystem.open(dirs, IDENTITY) as fs:
        asyncio.run(scenario(fs))
        assert fs.journal.txid == fs.journal.synced_txid == 2


async def _released(fs: FSNamesystem, committer: AsyncCommitter, paths, callback=None):
    """Log a mkdir per path, wait on each with ``Durable.then``; return the releases seen as
    (value, error, txid, synced_txid at release)."""
    seen, done = [], asyncio.get_running_loop().create_future()

    def release(value, error, txid):
        seen.append((value, error, txid, fs.journal.synced_txid))
        if callback is not None:
            callback(txid)
        if len(seen) == len(paths) and not done.done():
            done.set_result(None)

    for path in paths:
        txid = fs.mkdirs(path, 0o755, USER).txid
        committer.durable(txid, f"answer {path}").then(release, txid)
    await asyncio.wait_for(done, 10)
    return seen


def test_durable_releases_each_write_once_in_txid_order_after_its_sync(tmp_path):
    dirs = formatted(tmp_path)

    async def scenario(fs):
        committer = fs.async_committer()
        try:
            first = await _released(fs, committer, [f"/a{i}" for i in range(20)])
            second = await _released(fs, committer, [f"/b{i}" for i in range(5)])
            return first + second
        finally:
            committer.close()

    with open_fs(dirs) as fs:
        seen = asyncio.run(scenario(fs))
        assert fs.journal.metrics.syncs < 25        # the twenty logged in one turn share syncs
    txids = [txid for _, _, txid, _ in seen]
    assert txids == sorted(txids) and len(set(txids)) == 25
    assert all(error is None and synced >= txid for _, error, txid, synced in seen)
    assert [value for value, *_ in seen][:2] == ["answer /a0", "answer /a1"]


def test_a_failed_sync_is_handed_to_every_waiter_of_its_batch(tmp_path):
    """The only name dir fails its writes (the journal.write:<dir> fault point raises EIO):
    every waiter gets the error, none is answered as durable, and later writes are refused."""
    from nnlite.durability import faults
    dirs = formatted(tmp_path, names=["only"])

    async def scenario(fs):
        committer = fs.async_committer()
        try:
            faults.configure("journal.write:only=error")
            seen = await _released(fs, committer, [f"/d{i}" for i in range(6)])
            with pytest.raises(errors.NamenodeError):
                await committer.wait(fs.mkdirs("/later", 0o755, USER))
            return seen
        finally:
            faults.configure("")
            committer.close()

    with open_fs(dirs) as fs:
        seen = asyncio.run(scenario(fs))
    assert len(seen) == 6
    assert all(isinstance(error, errors.NamenodeError) for _, error, _, _ in seen)
    assert all("No healthy name directory is left" in str(error) for _, error, _, _ in seen)


def test_a_waiter_that_raises_does_not_strand_the_rest_of_its_batch(tmp_path, caplog):
    dirs = formatted(tmp_path)

    def explode_on_third(txid):
        if txid == 4:
            raise RuntimeError("the client went away")

    async def scenario(fs):
        committer = fs.async_committer()
        try:
            return await _released(fs, committer, [f"/e{i}" for i in range(8)],
                                   explode_on_third)
        finally:
            committer.close()

    with open_fs(dirs) as fs:
        seen = asyncio.run(scenario(fs))
    assert len(seen) == 8
    assert "releasing a durable op failed" in caplog.text


def test_close_stops_the_sync_thread(tmp_path):
    dirs = formatted(tmp_path)

    async def scenario(fs):
        committer = fs.async_committer()
        assert await committer.wait(fs.mkdirs("/x", 0o755, USER)) is True
        committer.close()
        return committer._thread

    with open_fs(dirs) as fs:
        thread = asyncio.run(scenario(fs))
    assert not thread.is_alive()


def test_an_op_logged_while_its_predecessor_is_released_joins_the_next_sync(tmp_path):
    """A connection answers a write and at once logs its next pipelined one, inside the
    release pass. That op must ride the one sync started after the pass: no second start
    is scheduled for it, so every sync started makes an op durable (syncs_started equals the
    journal's real syncs) and each op is released after its own sync."""
    dirs = formatted(tmp_path)
    chain = 200

    async def scenario(fs):
        committer = fs.async_committer()
        done = asyncio.get_running_loop().create_future()
        seen = []

        def step(_value, error, i):
            assert error is None
            if i:
                seen.append(fs.journal.synced_txid)
            if i == chain:
                done.set_result(None)
                return
            committer.durable(fs.mkdirs(f"/chain/d{i}", 0o755, USER).txid).then(step, i + 1)

        syncs0 = fs.journal.metrics.syncs
        try:
            step(None, None, 0)
            await asyncio.wait_for(done, 30)
        finally:
            committer.close()
        return committer.syncs_started, fs.journal.metrics.syncs - syncs0, seen

    with open_fs(dirs) as fs:
        started, synced, seen = asyncio.run(scenario(fs))
    assert started == synced == chain
    assert seen == sorted(seen) and len(set(seen)) == chain
