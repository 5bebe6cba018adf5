"""Files written over RPC, call by call on a plain socket (no bytes sent to the datanode):
create opens the file under a lease, addBlock hands out blocks, complete closes it once the
datanode has finalized them, abandonBlock, renewLease, fsync, isFileClosed, recoverLease, and
one writer at a time whichever protocol."""

from __future__ import annotations

import pytest

from nnlite.formats import edits
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop import hdfs, ipc
from nnlite.formats.hadoop.acl import FsPermissionProto
from tests.namenode.rpc.rawclient import RawClient
from tests.servers import wait_for

Status = ipc.RpcResponseHeaderRpcStatusProto
PERM = FsPermissionProto(perm=0o644)


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode()


@pytest.fixture
def client(nn):
    with RawClient(nn.rpc_port).connect(user="tester") as raw:
        yield raw


def create(client, path: str, name: str = "DFSClient_test_1", overwrite: bool = False):
    flags = cn.CreateFlagProto.CREATE | (cn.CreateFlagProto.OVERWRITE if overwrite else 0)
    return client.call("create", cn.CreateRequestProto(
        src=path, masked=PERM, clientName=name, createFlag=flags, createParent=True,
        replication=1, blockSize=1 << 20))


def answer(raw, method, **fields):
    return raw.answer(method, cn.METHODS[method][0](**fields))


def test_create_then_complete_with_no_block(client):
    header, _ = create(client, "/w/empty")
    assert header.status == Status.SUCCESS
    assert not answer(client, "isFileClosed", src="/w/empty").result
    assert answer(client, "complete", src="/w/empty", clientName="DFSClient_test_1").result
    assert answer(client, "isFileClosed", src="/w/empty").result
    assert answer(client, "getFileInfo", src="/w/empty").fs.length == 0


def test_add_block_names_the_built_in_datanode(client, nn):
    create(client, "/w/one")
    block = answer(client, "addBlock", src="/w/one", clientName="DFSClient_test_1").block
    assert block.offset == 0 and block.b.numBytes == 0 and len(block.locs) == 1
    datanodes = answer(client, "getDatanodeReport", type=cn.DatanodeReportTypeProto.LIVE).di
    assert [d.id.xferPort for d in datanodes] == [block.locs[0].id.xferPort]
    assert block.b.poolId.startswith("BP-")
    # not written by the datanode yet: complete answers false, the client would retry
    last = hdfs.ExtendedBlockProto(poolId=block.b.poolId, blockId=block.b.blockId,
                                 generationStamp=block.b.generationStamp, numBytes=0)
    assert not answer(client, "complete", src="/w/one", clientName="DFSClient_test_1",
                      last=last).result
    answer(client, "abandonBlock", b=last, src="/w/one", holder="DFSClient_test_1")
    assert answer(client, "complete", src="/w/one", clientName="DFSClient_test_1").result


def test_a_second_writer_is_refused_while_the_first_holds_the_lease(client, nn):
    create(client, "/w/busy")
    with RawClient(nn.rpc_port).connect(user="tester") as other:
        header, _ = create(other, "/w/busy", name="DFSClient_other", overwrite=True)
    assert header.exceptionClassName == \
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
    answer(client, "renewLease", clientName="DFSClient_test_1")
    answer(client, "fsync", src="/w/busy", client="DFSClient_test_1")
    assert answer(client, "complete", src="/w/busy", clientName="DFSClient_test_1").result


def test_a_call_on_a_file_the_client_does_not_write_is_lease_expired(client):
    header, _ = client.call("addBlock", cn.AddBlockRequestProto(
        src="/w/nobody", clientName="DFSClient_test_1"))
    assert header.exceptionClassName == \
        "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException"


def test_recover_lease_closes_a_file_another_client_left_open(client, nn):
    create(client, "/w/left", name="DFSClient_gone")
    with RawClient(nn.rpc_port).connect(user="tester") as other:
        assert answer(other, "recoverLease", src="/w/left", clientName="DFSClient_x").result
        assert answer(other, "isFileClosed", src="/w/left").result
    header, _ = client.call("complete", cn.CompleteRequestProto(
        src="/w/left", clientName="DFSClient_gone"))
    assert header.exceptionClassName == \
        "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException"


def test_fsync_with_the_last_block_s_length_is_recorded_in_the_namespace(client, nn):
    """FSNamesystem.fsync with SyncFlag.UPDATE_LENGTH (lastBlockLength): the length of the
    block being written is recorded, logged (UpdateBlocksOp, HDFS's persistBlocks), and
    getFileInfo shows it; without a length (-1, a plain hflush) nothing changes. addBlock
    logs the blocks too: the previous one at its reported length, the new one empty."""
    create(client, "/w/synced")
    first = answer(client, "addBlock", src="/w/synced", clientName="DFSClient_test_1").block
    answer(client, "fsync", src="/w/synced", client="DFSClient_test_1")
    assert answer(client, "getFileInfo", src="/w/synced").fs.length == 0
    answer(client, "fsync", src="/w/synced", client="DFSClient_test_1", lastBlockLength=1234)
    assert answer(client, "getFileInfo", src="/w/synced").fs.length == 1234
    previous = hdfs.ExtendedBlockProto(poolId=first.b.poolId, blockId=first.b.blockId,
                                       generationStamp=first.b.generationStamp, numBytes=5000)
    second = answer(client, "addBlock", src="/w/synced", clientName="DFSClient_test_1",
                    previous=previous).block
    assert answer(client, "getFileInfo", src="/w/synced").fs.length == 5000
    answer(client, "fsync", src="/w/synced", client="DFSClient_test_1", lastBlockLength=77)
    assert answer(client, "getFileInfo", src="/w/synced").fs.length == 5077
    logged = [op for _, op in edits.read_all(f"{nn.name_dirs[0]}/current/edits")[0]
              if isinstance(op, edits.UpdateBlocksOp) and op.path == "/w/synced"]
    assert [[b[:2] for b in op.blocks] for op in logged] == [
        [(first.b.blockId, 0)], [(first.b.blockId, 1234)],
        [(first.b.blockId, 5000), (second.b.blockId, 0)],
        [(first.b.blockId, 5000), (second.b.blockId, 77)]]


def test_server_defaults_stats_ha_state_token_and_msync(client):
    defaults = answer(client, "getServerDefaults").serverDefaults
    assert (defaults.bytesPerChecksum, defaults.checksumType) == (512, 2)   # CRC32C
    stats = answer(client, "getFsStats")
    assert stats.capacity >= stats.remaining > 0
    assert answer(client, "getHAServiceState").state == cn.HAServiceStateProto.ACTIVE
    assert not answer(client, "getDelegationToken", renewer="yarn").HasField("token")
    answer(client, "msync")


def test_quota_snapshots_xattrs_and_concat_of_an_empty_file(client):
    answer(client, "mkdirs", src="/w/q", masked=PERM, createParent=True)
    answer(client, "setQuota", path="/w/q", namespaceQuota=10,
           storagespaceQuota=(1 << 63) - 1)
    assert answer(client, "getQuotaUsage", path="/w/q").usage.quota == 10
    answer(client, "allowSnapshot", snapshotRoot="/w/q")
    assert answer(client, "createSnapshot", snapshotRoot="/w/q",
                  snapshotName="s1").snapshotPath == "/w/q/.snapshot/s1"
    xattr = cn.XAttrProto(namespace=cn.XAttrNamespaceProto.USER, name="color", value=b"red")
    answer(client, "setXAttr", src="/w/q", xAttr=xattr,
           flag=cn.XAttrSetFlagProto.XATTR_CREATE)
    got = answer(client, "getXAttrs", src="/w/q").xAttrs
    assert [(x.name, x.value) for x in got] == [("color", b"red")]
    for name in ("a", "b"):
        create(client, f"/w/c/{name}")
        answer(client, "complete", src=f"/w/c/{name}", clientName="DFSClient_test_1")
    header, _ = client.call("concat", cn.ConcatRequestProto(trg="/w/c/a", srcs=["/w/c/b"]))
    assert header.exceptionClassName == "org.apache.hadoop.HadoopIllegalArgumentException"
    assert [e.path for e in answer(client, "getListing", src="/w/c", startAfter=b"",
                                   needLocation=False).dirList.partialListing] == [b"a", b"b"]


def test_storage_policies_snapshot_listings_located_info_and_roll(client):
    names = [p.name for p in answer(client, "getStoragePolicies").policies]
    assert "HOT" in names and "COLD" in names
    answer(client, "mkdirs", src="/w/s", masked=PERM, createParent=True)
    answer(client, "setStoragePolicy", src="/w/s", policyName="COLD")
    assert answer(client, "getStoragePolicy", path="/w/s").storagePolicy.name == "COLD"
    answer(client, "allowSnapshot", snapshotRoot="/w/s")
    answer(client, "createSnapshot", snapshotRoot="/w/s", snapshotName="one")
    dirs = answer(client, "getSnapshottableDirListing").snapshottableDirList
    mine = [d for d in dirs.snapshottableDirListing if d.dirStatus.path == b"s"]
    assert mine and mine[0].parent_fullpath == b"/w" and mine[0].snapshot_number == 1
    snaps = answer(client, "getSnapshotListing", snapshotRoot="/w/s").snapshotList
    assert [s.dirStatus.path for s in snaps.snapshotListing] == [b"one"]
    create(client, "/w/s/f")
    answer(client, "complete", src="/w/s/f", clientName="DFSClient_test_1")
    located = answer(client, "getLocatedFileInfo", src="/w/s/f").fs
    assert located.HasField("locations") and located.locations.fileLength == 0
    before = answer(client, "getCurrentEditLogTxid").txid
    assert answer(client, "rollEdits").newSegmentTxId > before


def test_the_trash_interval_is_advertised_in_the_server_defaults(start_namenode):
    nn = start_namenode("-D", "fs.trash.interval=5")
    with RawClient(nn.rpc_port).connect(user="tester") as raw:
        assert answer(raw, "getServerDefaults").serverDefaults.trashInterval == 5


def test_a_writer_silent_past_the_soft_limit_loses_the_file_to_the_next(start_namenode):
    nn = start_namenode("-D", "nnlite.lease.soft-limit=0.5")
    with RawClient(nn.rpc_port).connect(user="tester") as first, \
            RawClient(nn.rpc_port).connect(user="tester") as second:
        create(first, "/w/taken", name="DFSClient_first")

        def taken_over() -> bool:
            header, _ = create(second, "/w/taken", name="DFSClient_second", overwrite=True)
            return header.status == Status.SUCCESS
        wait_for(taken_over, 30, "the second writer to take the file over")
        header, _ = first.call("complete", cn.CompleteRequestProto(
            src="/w/taken", clientName="DFSClient_first"))
        assert header.exceptionClassName == \
            "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException"
        assert answer(second, "complete", src="/w/taken", clientName="DFSClient_second").result


def test_open_files_and_save_namespace_for_the_superuser(client):
    create(client, "/w/open/f", name="DFSClient_open")
    listed = answer(client, "listOpenFiles", id=0, path="/w/open").entries
    assert [e.path for e in listed] == ["/w/open/f"]
    header, _ = client.call("saveNamespace", cn.SaveNamespaceRequestProto())
    assert header.exceptionClassName == \
        "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
    answer(client, "setSafeMode", action=cn.SafeModeActionProto.SAFEMODE_ENTER)
    try:
        assert answer(client, "saveNamespace").saved
    finally:
        answer(client, "setSafeMode", action=cn.SafeModeActionProto.SAFEMODE_LEAVE)
    assert answer(client, "complete", src="/w/open/f", clientName="DFSClient_open").result


def test_get_additional_datanode_answers_the_pipeline_s_own_datanodes(client, nn):
    """No datanode joins a pipeline mid-block (the replica would need TRANSFER_BLOCK): the
    answer is the existing datanodes, HDFS's answer when none is left; a block the client
    is not writing is refused as checkUCBlock refuses it."""
    create(client, "/w/replace")
    block = answer(client, "addBlock", src="/w/replace", clientName="DFSClient_test_1").block
    got = answer(client, "getAdditionalDatanode", src="/w/replace", blk=block.b,
                 existings=list(block.locs), existingStorageUuids=list(block.storageIDs),
                 numAdditionalNodes=1, clientName="DFSClient_test_1").block
    assert [n.id.datanodeUuid for n in got.locs] == [n.id.datanodeUuid for n in block.locs]
    assert list(got.storageIDs) == list(block.storageIDs)
    assert got.b.blockId == block.b.blockId
    header, _ = client.call("getAdditionalDatanode", cn.GetAdditionalDatanodeRequestProto(
        src="/w/replace", blk=block.b, numAdditionalNodes=1, clientName="DFSClient_other"))
    assert header.exceptionClassName == \
        "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException"
