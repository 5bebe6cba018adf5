"""The WebHDFS metadata API over raw HTTP, checked against what Hadoop's NameNode answers:
JSON shapes (JsonUtil), which ops answer an empty body, RemoteException class names and status
codes (ExceptionHandler), parameter parsing (the *Param classes), identity (user.name, doas),
and malformed input of every kind, after which the service must keep serving.

One namenode serves the module (a second one checks dfs.ls.limit); every test works under its
own directory. Files come from the seeded name dir (WebHDFS has no CREATE yet).
"""

from __future__ import annotations

import itertools
import json

import pytest

from tests.namenode.http.helpers import (
    FILE_STATUS_KEYS,
    WebHdfs,
    exchange,
    parse_replies,
)

FILES = {"/files/f1": 100, "/files/f2": 300, "/same/same": 10, "/quota/big": 1000}
_ids = itertools.count()


@pytest.fixture(scope="module")
def nn(start_module_namenode):
    return start_module_namenode(files=FILES)


@pytest.fixture(scope="module")
def w(nn) -> WebHdfs:
    return WebHdfs(nn)


@pytest.fixture
def d(w) -> str:
    """A fresh directory owned by tester, 755."""
    path = f"/t/d{next(_ids)}"
    w.mkdirs(path)
    return path


def error(reply) -> tuple[int, str]:
    return reply.error


# ------------------------------------------------------------------------------- FileStatus

def test_directory_status_has_hadoops_shape(w, d):
    w.mkdirs(d + "/x/y")
    st = w.status(d + "/x")
    assert set(st) == FILE_STATUS_KEYS
    assert st["pathSuffix"] == "" and st["type"] == "DIRECTORY"
    assert (st["length"], st["blockSize"], st["replication"]) == (0, 0, 0)
    assert (st["owner"], st["group"], st["permission"]) == ("tester", "supergroup", "755")
    assert st["childrenNum"] == 1 and st["storagePolicy"] == 0
    assert isinstance(st["fileId"], int) and st["fileId"] > 16385
    assert st["fileId"] != w.status(d + "/x/y")["fileId"]


def test_file_status_has_hadoops_shape(w):
    st = w.status("/files/f1")
    assert set(st) == FILE_STATUS_KEYS
    assert (st["type"], st["pathSuffix"], st["length"]) == ("FILE", "", 100)
    assert (st["replication"], st["blockSize"], st["childrenNum"]) == (1, 128 << 20, 0)
    assert st["permission"] == "644" and st["owner"] == "tester"


def test_link_status_is_the_status_without_symlinks(w):
    reply = w.get("/files/f1", "GETFILELINKSTATUS")
    assert reply.status == 200 and reply.json["FileStatus"] == w.status("/files/f1")


def test_sticky_bit_shows_as_four_octal_digits(w, d):
    assert w.put(d, "SETPERMISSION", permission="1777").status == 200
    assert w.status(d)["permission"] == "1777"
    assert w.put(d, "SETPERMISSION", permission="0").status == 200
    assert w.status(d)["permission"] == "0"


def test_root_status(w):
    st = w.status("/")
    assert st["pathSuffix"] == "" and st["type"] == "DIRECTORY" and st["fileId"] == 16385
    assert w.get("", "GETFILESTATUS").json == w.get("/", "GETFILESTATUS").json


def test_missing_path_is_file_not_found(w, d):
    reply = w.get(d + "/nope", "GETFILESTATUS")
    assert error(reply) == (404, "FileNotFoundException")
    assert reply.java_class == "java.io.FileNotFoundException"
    assert reply.message == f"File does not exist: {d}/nope"


def test_a_file_in_the_middle_of_a_path(w):
    """FSDirectory.resolvePath: a file where a directory should be is a
    ParentNotDirectoryException only for an op that creates the path; for any other it is an
    AccessControlException, which GETFILESTATUS answers as "File does not exist" for the
    superuser (FSDirStatAndListingOp.getFileInfo) and passes on for anyone else."""
    assert error(w.get("/files/f1/x", "GETFILESTATUS")) == (404, "FileNotFoundException")
    reply = w.get("/files/f1/x", "GETFILESTATUS", user="bob")
    assert error(reply) == (403, "AccessControlException")
    assert reply.message == "/files/f1 (is not a directory)"
    assert error(w.get("/files/f1/x", "LISTSTATUS")) == (403, "AccessControlException")
    assert error(w.delete("/files/f1/x")) == (403, "AccessControlException")
    assert error(w.put("/files/f1/x", "MKDIRS")) == (403, "ParentNotDirectoryException")


def test_repeated_slashes_are_one_except_in_a_path_being_created(w, d):
    """INode.getPathComponents skips empty components; a path an op creates must be a valid
    name (DFSUtil.isValidName: no "//" in the middle)."""
    w.mkdirs(d + "/x")
    assert w.status(d.replace("/", "//") + "//x")["type"] == "DIRECTORY"
    reply = w.put(d + "//y", "MKDIRS")
    assert error(reply) == (400, "InvalidPathException")
    assert reply.message == f"Invalid file name: {d}//y"
    assert w.put(d + "/y/", "MKDIRS").status == 200          # a trailing slash is fine


# ------------------------------------------------------------------------------- listings

def test_list_status_sorted_with_names_as_suffixes(w, d):
    for name in ("b", "a", "c/x"):
        w.mkdirs(f"{d}/{name}")
    reply = w.get(d, "LISTSTATUS")
    assert reply.status == 200 and list(reply.json) == ["FileStatuses"]
    statuses = reply.json["FileStatuses"]["FileStatus"]
    assert [s["pathSuffix"] for s in statuses] == ["a", "b", "c"]
    assert [s["childrenNum"] for s in statuses] == [0, 0, 1]
    assert all(set(s) == FILE_STATUS_KEYS for s in statuses)


def test_empty_directory_lists_as_an_empty_array(w, d):
    assert w.get(d, "LISTSTATUS").json == {"FileStatuses": {"FileStatus": []}}


def test_listing_a_file_gives_the_file_with_an_empty_suffix(w):
    statuses = w.get("/files/f2", "LISTSTATUS").json["FileStatuses"]["FileStatus"]
    assert len(statuses) == 1 and statuses[0]["pathSuffix"] == ""
    assert statuses[0]["length"] == 300


def test_a_file_named_like_its_directory_keeps_its_name(w):
    """/same/same: listing /same shows the child "same", not the empty suffix of a file."""
    statuses = w.get("/same", "LISTSTATUS").json["FileStatuses"]["FileStatus"]
    assert [s["pathSuffix"] for s in statuses] == ["same"]
    assert w.get("/same/same", "LISTSTATUS").json["FileStatuses"]["FileStatus"][0][
        "pathSuffix"] == ""
    batch = w.get("/same", "LISTSTATUS_BATCH").json["DirectoryListing"]
    assert batch["partialListing"]["FileStatuses"]["FileStatus"][0]["pathSuffix"] == "same"


def test_listing_a_missing_path_is_file_not_found(w, d):
    assert error(w.get(d + "/nope", "LISTSTATUS")) == (404, "FileNotFoundException")
    assert error(w.get(d + "/nope", "LISTSTATUS_BATCH")) == (404, "FileNotFoundException")


def test_listing_needs_read_permission(w, d):
    w.put(d, "SETPERMISSION", permission="711")
    assert error(w.get(d, "LISTSTATUS", user="bob")) == (403, "AccessControlException")
    assert w.get(d, "GETFILESTATUS", user="bob").status == 200


def test_list_status_batch_shape_with_the_default_limit(w, d):
    for name in ("x", "y"):
        w.mkdirs(f"{d}/{name}")
    reply = w.get(d, "LISTSTATUS_BATCH")
    listing = reply.json["DirectoryListing"]
    assert set(listing) == {"partialListing", "remainingEntries"}
    assert listing["remainingEntries"] == 0
    statuses = listing["partialListing"]["FileStatuses"]["FileStatus"]
    assert [s["pathSuffix"] for s in statuses] == ["x", "y"]
    after = w.get(d, "LISTSTATUS_BATCH", startafter="x").json["DirectoryListing"]
    assert [s["pathSuffix"] for s in after["partialListing"]["FileStatuses"]["FileStatus"]] \
        == ["y"]


def test_list_status_batch_listing_a_file(w):
    listing = w.get("/files/f1", "LISTSTATUS_BATCH").json["DirectoryListing"]
    statuses = listing["partialListing"]["FileStatuses"]["FileStatus"]
    assert [s["pathSuffix"] for s in statuses] == [""] and listing["remainingEntries"] == 0


def test_list_status_batch_pages_by_dfs_ls_limit(start_namenode):
    server = start_namenode("-D", "dfs.ls.limit=2")
    w = WebHdfs(server)
    names = ["a", "b", "c", "d", "e"]
    for name in reversed(names):
        w.mkdirs(f"/p/{name}")
    pages, start = [], None
    while True:
        kw = {"startafter": start} if start is not None else {}
        listing = w.get("/p", "LISTSTATUS_BATCH", **kw).json["DirectoryListing"]
        page = [s["pathSuffix"] for s in
                listing["partialListing"]["FileStatuses"]["FileStatus"]]
        pages.append((page, listing["remainingEntries"]))
        if not listing["remainingEntries"]:
            break
        start = page[-1]
    assert pages == [(["a", "b"], 3), (["c", "d"], 1), (["e"], 0)]
    # a start that is not an entry starts after where it would sort; past the end: empty
    listing = w.get("/p", "LISTSTATUS_BATCH", startafter="bb").json["DirectoryListing"]
    assert [s["pathSuffix"] for s in
            listing["partialListing"]["FileStatuses"]["FileStatus"]] == ["c", "d"]
    listing = w.get("/p", "LISTSTATUS_BATCH", startafter="z").json["DirectoryListing"]
    assert listing == {"partialListing": {"FileStatuses": {"FileStatus": []}},
                       "remainingEntries": 0}
    # LISTSTATUS is not paged
    assert w.names("/p") == names


# ------------------------------------------------------------------------------- summaries

def test_content_summary(w):
    summary = w.get("/files", "GETCONTENTSUMMARY").json["ContentSummary"]
    assert {"directoryCount", "fileCount", "length", "quota", "spaceConsumed", "spaceQuota",
            "typeQuota"} <= set(summary)
    assert (summary["directoryCount"], summary["fileCount"], summary["length"]) == (1, 2, 400)
    assert (summary["quota"], summary["spaceQuota"], summary["spaceConsumed"]) == (-1, -1, 400)
    assert summary["typeQuota"] == {}
    one = w.get("/files/f1", "GETCONTENTSUMMARY").json["ContentSummary"]
    assert (one["directoryCount"], one["fileCount"], one["length"]) == (0, 1, 100)


def test_quota_usage_and_set_quota(w, d):
    w.mkdirs(d + "/q/a")
    usage = w.get(d + "/q", "GETQUOTAUSAGE").json["QuotaUsage"]
    assert usage == {"fileAndDirectoryCount": 2, "quota": -1, "spaceConsumed": 0,
                     "spaceQuota": -1, "typeQuota": {}}
    reply = w.put(d + "/q", "SETQUOTA", namespacequota="3", storagespacequota="1000")
    assert (reply.status, reply.body) == (200, b"")
    usage = w.get(d + "/q", "GETQUOTAUSAGE").json["QuotaUsage"]
    assert (usage["quota"], usage["spaceQuota"], usage["fileAndDirectoryCount"]) == (3, 1000, 2)
    summary = w.get(d + "/q", "GETCONTENTSUMMARY").json["ContentSummary"]
    assert (summary["quota"], summary["spaceQuota"]) == (3, 1000)
    w.mkdirs(d + "/q/b")
    reply = w.put(d + "/q/c", "MKDIRS")
    assert error(reply) == (403, "NSQuotaExceededException")
    assert reply.java_class == "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException"
    assert w.names(d + "/q") == ["a", "b"]
    # namespacequota alone leaves the space quota; -1 clears
    w.put(d + "/q", "SETQUOTA", namespacequota="-1")
    usage = w.get(d + "/q", "GETQUOTAUSAGE").json["QuotaUsage"]
    assert (usage["quota"], usage["spaceQuota"]) == (-1, 1000)
    w.mkdirs(d + "/q/c")


def test_space_quota_exceeded(w):
    assert w.put("/quota", "SETQUOTA", storagespacequota="2500").status == 200
    try:
        assert w.put("/quota/big", "SETREPLICATION", replication="2").json == {"boolean": True}
        reply = w.put("/quota/big", "SETREPLICATION", replication="3")
        assert error(reply) == (403, "DSQuotaExceededException")
        assert w.status("/quota/big")["replication"] == 2
    finally:
        w.put("/quota", "SETQUOTA", storagespacequota="-1")
        w.put("/quota/big", "SETREPLICATION", replication="1")


def test_set_quota_needs_a_superuser_and_a_directory(w, d):
    assert error(w.put(d, "SETQUOTA", namespacequota="5", user="bob")) == \
        (403, "AccessControlException")
    assert error(w.put("/files/f1", "SETQUOTA", namespacequota="5")) == \
        (403, "PathIsNotDirectoryException")
    assert error(w.put(d, "SETQUOTA", namespacequota="-2")) == (400, "IllegalArgumentException")
    assert error(w.put(d, "SETQUOTA", namespacequota="x")) == (400, "IllegalArgumentException")


def test_home_directory_and_trash_root(w):
    assert w.get("/", "GETHOMEDIRECTORY").json == {"Path": "/user/tester"}
    assert w.get("/any/where", "GETHOMEDIRECTORY", user="alice").json == {"Path": "/user/alice"}
    assert w.get("/", "GETHOMEDIRECTORY", user=None).json == {"Path": "/user/dr.who"}
    assert w.get("/x", "GETTRASHROOT").json == {"Path": "/user/tester/.Trash"}


def test_server_defaults_types_as_the_java_client_reads_them(w):
    defaults = w.get("/", "GETSERVERDEFAULTS").json["FsServerDefaults"]
    ints = ("blockSize", "bytesPerChecksum", "writePacketSize", "replication",
            "fileBufferSize", "trashInterval", "checksumType", "defaultStoragePolicyId")
    assert all(type(defaults[k]) is int for k in ints), defaults
    assert defaults["blockSize"] == 128 << 20 and defaults["replication"] == 1
    assert defaults["checksumType"] == 2    # DataChecksum.Type.CRC32C.id
    assert defaults["encryptDataTransfer"] is False and defaults["keyProviderUri"] == ""


# ------------------------------------------------------------------------------- xattrs

def test_xattrs_set_get_list_remove(w, d):
    for name, value in (("user.text", '"hello"'), ("user.hex", "0x0102ff"),
                        ("user.b64", "0sAQL/"), ("user.raw", "plain")):
        reply = w.put(d, "SETXATTR", xattr_name=name, xattr_value=value, flag="CREATE")
        assert (reply.status, reply.body) == (200, b""), reply
    names = w.get(d, "LISTXATTRS").json["XAttrNames"]
    assert isinstance(names, str) and json.loads(names) == \
        ["user.text", "user.hex", "user.b64", "user.raw"]
    assert names == '["user.text","user.hex","user.b64","user.raw"]'    # Jackson's form
    hexed = w.get(d, "GETXATTRS", encoding="HEX").json["XAttrs"]
    assert hexed == [{"name": "user.text", "value": "0x68656c6c6f"},
                     {"name": "user.hex", "value": "0x0102ff"},
                     {"name": "user.b64", "value": "0x0102ff"},
                     {"name": "user.raw", "value": "0x706c61696e"}]
    text = w.get(d, "GETXATTRS", encoding="text", xattr_name=["user.raw", "user.text"])
    assert text.json == {"XAttrs": [{"name": "user.raw", "value": '"plain"'},
                                    {"name": "user.text", "value": '"hello"'}]}
    b64 = w.get(d, "GETXATTRS", encoding="base64", xattr_name="user.hex").json["XAttrs"]
    assert b64 == [{"name": "user.hex", "value": "0sAQL/"}]
    reply = w.put(d, "REMOVEXATTR", xattr_name="user.hex")
    assert (reply.status, reply.body) == (200, b"")
    assert json.loads(w.get(d, "LISTXATTRS").json["XAttrNames"]) == \
        ["user.text", "user.b64", "user.raw"]


def test_xattr_flags_and_missing_names(w, d):
    assert w.put(d, "SETXATTR", xattr_name="user.a", xattr_value="1", flag="CREATE").status \
        == 200
    assert error(w.put(d, "SETXATTR", xattr_name="user.a", xattr_value="2", flag="CREATE")) \
        == (403, "IOException")
    assert error(w.put(d, "SETXATTR", xattr_name="user.b", xattr_value="2",
                       flag="REPLACE")) == (403, "IOException")
    assert w.put(d, "SETXATTR", xattr_name="user.a", xattr_value="3",
                 flag="create,replace").status == 200
    assert w.get(d, "GETXATTRS", encoding="TEXT").json["XAttrs"] == \
        [{"name": "user.a", "value": '"3"'}]
    assert error(w.get(d, "GETXATTRS", encoding="TEXT", xattr_name="user.zz")) == \
        (403, "IOException")
    assert error(w.put(d, "REMOVEXATTR", xattr_name="user.zz")) == (403, "IOException")
    assert error(w.put(d, "SETXATTR", xattr_name="nons", xattr_value="1", flag="CREATE")) \
        == (400, "IllegalArgumentException")
    assert error(w.put(d, "SETXATTR", xattr_name="user.c", flag="SOMETIMES")) == \
        (400, "IllegalArgumentException")
    assert error(w.get(d, "GETXATTRS", encoding="rot13")) == (400, "IllegalArgumentException")


@pytest.mark.parametrize("params", [
    {"xattr_value": "1", "flag": "CREATE"},                  # no name
    {"xattr_name": "user.n", "xattr_value": "1"},            # no flag
], ids=["name", "flag"])
def test_set_xattr_required_params(w, d, params):
    reply = w.put(d, "SETXATTR", **params)
    assert error(reply) == (400, "IllegalArgumentException")
    assert "Required param" in reply.message


def test_get_xattrs_needs_an_encoding(w, d):
    reply = w.get(d, "GETXATTRS")
    assert error(reply) == (400, "IllegalArgumentException")
    assert reply.message == "Required param encoding for op: GETXATTRS is null or empty"


def test_xattr_value_codecs_and_empty_values(w, d):
    w.put(d, "SETXATTR", xattr_name="user.e", flag="CREATE")          # no value at all
    w.put(d, "SETXATTR", xattr_name="user.q", xattr_value='""', flag="CREATE")
    assert w.get(d, "GETXATTRS", encoding="HEX").json["XAttrs"] == \
        [{"name": "user.e", "value": None}, {"name": "user.q", "value": None}]
    reply = w.put(d, "SETXATTR", xattr_name="user.h", xattr_value="0xzz", flag="CREATE")
    assert error(reply) == (403, "IOException")      # XAttrCodec: DecoderException -> IO
    assert json.loads(w.get(d, "LISTXATTRS").json["XAttrNames"]) == ["user.e", "user.q"]


def test_xattrs_need_permissions(w, d):
    w.put(d, "SETXATTR", xattr_name="user.a", xattr_value="1", flag="CREATE")
    assert error(w.put(d, "SETXATTR", xattr_name="user.b", xattr_value="1", flag="CREATE",
                       user="bob")) == (403, "AccessControlException")
    assert error(w.put(d, "SETXATTR", xattr_name="trusted.b", xattr_value="1",
                       flag="CREATE", user="bob")) == (403, "AccessControlException")
    assert w.get(d, "GETXATTRS", encoding="TEXT", user="bob").status == 200


# ------------------------------------------------------------------------------- mkdirs

def test_mkdirs_answers_a_boolean_and_applies_the_permission(w, d):
    reply = w.put(d + "/a/b", "MKDIRS", permission="700")
    assert (reply.status, reply.body) == (200, b'{"boolean":true}')
    assert w.status(d + "/a/b")["permission"] == "700"
    assert w.status(d + "/a")["permission"] == "700"    # parents get u+wx of the mode
    assert w.put(d + "/a/b", "MKDIRS").json == {"boolean": True}     # exists: true


def test_mkdirs_refusals(w, d):
    assert error(w.put("/files/f1", "MKDIRS")) == (403, "FileAlreadyExistsException")
    assert error(w.put("/files/f1/sub", "MKDIRS")) == (403, "ParentNotDirectoryException")
    assert error(w.put(d + "/x", "MKDIRS", user="bob")) == (403, "AccessControlException")
    assert error(w.put(d + "/x", "MKDIRS", permission="8")) == (400, "IllegalArgumentException")
    assert w.names(d) == []


# ------------------------------------------------------------------------------- rename

def test_rename_boolean_form(w, d):
    w.mkdirs(d + "/a/inner")
    w.mkdirs(d + "/into")
    reply = w.put(d + "/a", "RENAME", destination=d + "/b")
    assert (reply.status, reply.body) == (200, b'{"boolean":true}')
    assert w.names(d) == ["b", "into"]
    assert w.put(d + "/b", "RENAME", destination=d + "/into").json == {"boolean": True}
    assert w.names(d + "/into") == ["b"] and w.names(d + "/into/b") == ["inner"]
    for src, dst in ((d + "/nope", d + "/z"),             # no source
                     (d + "/into", d + "/into/b/deeper"),  # under itself
                     (d + "/into", d + "/no/parent")):     # no parent
        assert w.put(src, "RENAME", destination=dst).json == {"boolean": False}
    assert w.names(d) == ["into"]


def test_rename_with_empty_options_is_the_boolean_form(w, d):
    w.mkdirs(d + "/a")
    assert w.put(d + "/a", "RENAME", destination=d + "/b", renameoptions="").json == \
        {"boolean": True}


def test_rename_with_options_answers_an_empty_body(w, d):
    w.mkdirs(d + "/a/inner")
    reply = w.put(d + "/a", "RENAME", destination=d + "/b", renameoptions="NONE")
    assert (reply.status, reply.body) == (200, b"")
    assert reply.headers["content-type"] == "application/octet-stream"
    assert w.names(d) == ["b"] and w.names(d + "/b") == ["inner"]


def test_rename_options_refusals_are_typed_and_change_nothing(w, d):
    w.mkdirs(d + "/a/x")
    w.mkdirs(d + "/full/y")
    w.mkdirs(d + "/empty")
    cases = [
        ("/a", "/full", "NONE", (403, "FileAlreadyExistsException")),
        ("/a", "/full", "OVERWRITE", (403, "IOException")),            # not empty
        ("/nope", "/z", "NONE", (404, "FileNotFoundException")),
        ("/a", "/no/such/parent", "NONE", (404, "FileNotFoundException")),
        ("/a", "/a", "NONE", (403, "FileAlreadyExistsException")),
        ("/a", "/a/x/under", "NONE", (403, "IOException")),
        ("/a", "/bad", "SIDEWAYS", (400, "IllegalArgumentException")),
    ]
    for src, dst, options, expected in cases:
        reply = w.put(d + src, "RENAME", destination=d + dst, renameoptions=options)
        assert error(reply) == expected, (src, dst, options, reply)
    assert error(w.put(d + "/a", "RENAME", destination="/files/f1/x", renameoptions="NONE")) \
        == (403, "ParentNotDirectoryException")
    assert w.names(d) == ["a", "empty", "full"] and w.names(d + "/a") == ["x"]
    reply = w.put(d + "/a", "RENAME", destination=d + "/empty", renameoptions="OVERWRITE")
    assert (reply.status, reply.body) == (200, b"")
    assert w.names(d) == ["empty", "full"] and w.names(d + "/empty") == ["x"]


def test_rename_destination_must_be_given_and_absolute(w, d):
    w.mkdirs(d + "/a")
    reply = w.put(d + "/a", "RENAME")
    assert error(reply) == (400, "IllegalArgumentException")
    assert reply.message == "Required param destination for op: RENAME is null or empty"
    assert error(w.put(d + "/a", "RENAME", destination="relative/b")) == \
        (400, "IllegalArgumentException")
    # Hadoop's DestinationParam goes through Path: doubled and trailing slashes collapse
    assert w.put(d + "/a", "RENAME", destination=d + "//b/").json == {"boolean": True}
    assert w.names(d) == ["b"]


def test_rename_needs_permissions(w, d):
    w.mkdirs(d + "/a")
    assert error(w.put(d + "/a", "RENAME", destination=d + "/b", renameoptions="NONE",
                       user="bob")) == (403, "AccessControlException")


# ------------------------------------------------------------------------------- delete

def test_delete(w, d):
    w.mkdirs(d + "/full/x")
    w.mkdirs(d + "/empty")
    reply = w.delete(d + "/full")
    assert error(reply) == (403, "PathIsNotEmptyDirectoryException")
    assert reply.java_class == "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
    assert w.delete(d + "/empty").json == {"boolean": True}
    assert w.delete(d + "/full", recursive="true").json == {"boolean": True}
    assert w.delete(d + "/full", recursive="true").json == {"boolean": False}
    assert error(w.delete(d, recursive="maybe")) == (400, "IllegalArgumentException")
    assert w.names(d) == []


def test_delete_needs_write_permission(w, d):
    w.mkdirs(d + "/x")
    assert error(w.delete(d + "/x", user="bob")) == (403, "AccessControlException")
    assert w.names(d) == ["x"]


# ------------------------------------------------------------------------------- attributes

def test_set_permission(w, d):
    reply = w.put(d, "SETPERMISSION", permission="750")
    assert (reply.status, reply.body) == (200, b"")
    assert reply.headers["content-type"] == "application/octet-stream"
    assert w.status(d)["permission"] == "750"
    assert w.put(d, "SETPERMISSION").status == 200          # no permission: 755
    assert w.status(d)["permission"] == "755"
    assert error(w.put(d, "SETPERMISSION", permission="700", user="bob")) == \
        (403, "AccessControlException")
    assert error(w.put(d + "/nope", "SETPERMISSION", permission="700")) == \
        (404, "FileNotFoundException")


@pytest.mark.parametrize("value", ["8", "999", "2000", "-1", "abc", "0o755", "7_55", " 755",
                                   "75 5"])
def test_bad_permissions_are_refused(w, d, value):
    reply = w.put(d, "SETPERMISSION", permission=value)
    assert error(reply) == (400, "IllegalArgumentException")
    assert w.status(d)["permission"] == "755"


def test_set_owner(w, d):
    reply = w.put(d, "SETOWNER", owner="alice", group="staff")
    assert (reply.status, reply.body) == (200, b"")
    st = w.status(d)
    assert (st["owner"], st["group"]) == ("alice", "staff")
    # alice owns it: she may set a group she is in, not another owner or a foreign group
    assert w.put(d, "SETOWNER", group="staff", user="alice").status == 200
    assert error(w.put(d, "SETOWNER", owner="bob", user="alice")) == \
        (403, "AccessControlException")
    assert error(w.put(d, "SETOWNER", group="wheel", user="alice")) == \
        (403, "AccessControlException")
    reply = w.put(d, "SETOWNER")
    assert error(reply) == (400, "IllegalArgumentException")
    assert reply.message == "Both owner and group are empty."


def test_set_replication(w, d):
    assert w.put(d, "SETREPLICATION", replication="3").json == {"boolean": False}   # a dir
    reply = w.put("/files/f2", "SETREPLICATION", replication="2")
    assert (reply.status, reply.body) == (200, b'{"boolean":true}')
    assert w.status("/files/f2")["replication"] == 2
    assert w.put("/files/f2", "SETREPLICATION").json == {"boolean": True}     # default: 1
    assert w.status("/files/f2")["replication"] == 1
    for bad in ("0", "-1", "x", "70000", "1.5"):
        assert error(w.put("/files/f2", "SETREPLICATION", replication=bad)) == \
            (400, "IllegalArgumentException"), bad
    assert error(w.put("/files/f2", "SETREPLICATION", replication="2", user="bob")) == \
        (403, "AccessControlException")


def test_set_times(w, d):
    reply = w.put(d, "SETTIMES", modificationtime="123456", accesstime="654321")
    assert (reply.status, reply.body) == (200, b"")
    st = w.status(d)
    assert (st["modificationTime"], st["accessTime"]) == (123456, 654321)
    assert w.put(d, "SETTIMES", accesstime="777").status == 200       # -1: unchanged
    st = w.status(d)
    assert (st["modificationTime"], st["accessTime"]) == (123456, 777)
    for bad in ("1_000", "12x", "", "-5", "99999999999999999999"):
        reply = w.put(d, "SETTIMES", modificationtime=bad)
        if bad == "":      # an empty value is the default (-1), as in Hadoop's Param.Domain
            assert reply.status == 200
            continue
        assert error(reply) == (400, "IllegalArgumentException"), bad
    assert w.status(d)["modificationTime"] == 123456
    assert error(w.put(d, "SETTIMES", modificationtime="1", user="bob")) == \
        (403, "AccessControlException")


# ------------------------------------------------------------------------------- safe mode

def test_safe_mode_refuses_mutations_and_serves_reads(w, nn, d):
    admin = w.raw("PUT", "/admin?op=SAFEMODE&action=enter&user.name=tester")
    assert admin.status == 200
    try:
        reply = w.put(d + "/x", "MKDIRS")
        assert error(reply) == (403, "SafeModeException")
        assert reply.java_class == "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
        assert error(w.delete(d, recursive="true")) == (403, "SafeModeException")
        assert w.get(d, "LISTSTATUS").status == 200
    finally:
        assert w.raw("PUT", "/admin?op=SAFEMODE&action=leave&user.name=tester").status == 200
    w.mkdirs(d + "/x")


# ------------------------------------------------------------------------------- parameters

def test_unknown_and_missing_ops(w):
    reply = w.get("/", "FOO")
    assert error(reply) == (400, "IllegalArgumentException")
    assert reply.message == ('Invalid value for webhdfs parameter "op": No enum constant '
                             'org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.FOO')
    reply = w.put("/", "GETFILESTATUS")          # a GET op sent as PUT
    assert error(reply) == (400, "IllegalArgumentException")
    assert reply.message.endswith("PutOpParam.Op.GETFILESTATUS")
    assert error(w.call("DELETE", "/", "MKDIRS")) == (400, "IllegalArgumentException")
    assert error(w.call("POST", "/", "LISTSTATUS")) == (400, "IllegalArgumentException")
    reply = w.call("GET", "/")                    # no op
    assert error(reply) == (400, "UnsupportedOperationException")
    assert reply.message == "op=NULL is not supported"


def test_parameter_names_are_case_insensitive_and_extras_ignored(w, d):
    reply = w.call("PUT", d + "/x", query="OP=mkdirs&User.Name=tester&Permission=711"
                                          "&bogus=1&another")
    assert reply.json == {"boolean": True}
    assert w.status(d + "/x")["permission"] == "711"


def test_repeated_parameters(w, d):
    same = w.call("GET", d, query="op=GETFILESTATUS&op=GETFILESTATUS&user.name=tester")
    assert same.status == 200
    clash = w.call("GET", d, query="op=GETFILESTATUS&op=LISTSTATUS&user.name=tester")
    assert error(clash) == (400, "IllegalArgumentException")
    clash = w.call("PUT", d + "/x", query="op=MKDIRS&permission=700&permission=755")
    assert error(clash) == (400, "IllegalArgumentException")
    assert w.names(d) == []


def test_query_encoding(w, d):
    w.mkdirs(d + "/a b+c")
    assert w.names(d) == ["a b+c"]
    reply = w.call("PUT", d + "/a b+c", query="op=RENAME&user.name=tester&destination="
                                              + d.replace("/", "%2F") + "%2Fd+e%2Bf")
    assert reply.json == {"boolean": True}
    assert w.names(d) == ["d e+f"]
    w.mkdirs(d + "/\u00e9t\u00e9/\u6587")
    assert w.names(d + "/\u00e9t\u00e9") == ["\u6587"]


# ------------------------------------------------------------------------------- identity

def test_user_name_decides_permissions(w, d):
    w.put(d, "SETOWNER", owner="alice")
    w.mkdirs(d + "/by-alice", user="alice")
    assert w.status(d + "/by-alice")["owner"] == "alice"
    assert error(w.put(d + "/by-bob", "MKDIRS", user="bob")) == (403, "AccessControlException")
    assert error(w.put(d + "/anon", "MKDIRS", user=None)) == (403, "AccessControlException")


def test_doas_as_hadoop_s_proxy_user_rules_allow_it(start_namenode):
    """DefaultImpersonationProvider: the real user needs hadoop.proxyuser.<real>.users (or
    .groups) naming the user or one of its groups, and .hosts covering the caller's address;
    being the superuser grants nothing. A refusal is WebHDFS's SecurityException (403)."""
    server = start_namenode(
        "-D", "hadoop.proxyuser.tester.users=alice",
        "-D", "hadoop.proxyuser.tester.hosts=127.0.0.1",
        "-D", "hadoop.proxyuser.carol.groups=staff",
        "-D", "hadoop.proxyuser.carol.hosts=10.0.0.0/8",
        "-D", "hadoop.proxyuser.erin.groups=staff", "-D", "hadoop.proxyuser.erin.hosts=*")
    w = WebHdfs(server)
    w.mkdirs("/doas")
    w.put("/doas", "SETPERMISSION", permission="777")
    w.mkdirs("/doas/as-alice", doas="alice")
    assert w.status("/doas/as-alice")["owner"] == "alice"
    assert w.get("/", "GETHOMEDIRECTORY", doas="alice").json == {"Path": "/user/alice"}
    refusals = [
        (w.put("/doas/x", "MKDIRS", doas="bob"),                 # the superuser, no rule
         "User: tester is not allowed to impersonate bob"),
        (w.put("/doas/x", "MKDIRS", user="carol", doas="alice"),  # not from 10/8
         "Unauthorized connection for super-user: carol from IP 127.0.0.1"),
        (w.put("/doas/x", "MKDIRS", user="erin", doas="bob"),     # bob is not in staff
         "User: erin is not allowed to impersonate bob"),
        (w.put("/doas/x", "MKDIRS", user="dave", doas="alice"),   # no rule at all
         "User: dave is not allowed to impersonate alice"),
    ]
    for reply, reason in refusals:
        assert error(reply) == (403, "SecurityException"), reply
        assert reason in reply.message
    assert w.put("/doas/by-erin", "MKDIRS", user="erin", doas="alice").status == 200
    assert w.status("/doas/by-erin")["owner"] == "alice"
    assert w.put("/doas/self", "MKDIRS", user="bob", doas="bob").status == 200
    assert w.names("/doas") == ["as-alice", "by-erin", "self"]


@pytest.mark.parametrize("name", ["1abc", "a b", "a/b", "x:y", "\u00e9"])
def test_invalid_user_names_are_refused(w, name):
    reply = w.get("/", "GETFILESTATUS", user=name)
    assert error(reply) == (400, "IllegalArgumentException")
    assert 'parameter "user.name"' in reply.message


# ------------------------------------------------------------------------------- malformed

RAW_PATHS = [
    ("/webhdfs/v1/a/../b?op=GETFILESTATUS", 400),
    ("/webhdfs/v1/../../etc/passwd?op=GETFILESTATUS", 400),
    ("/webhdfs/v1/files//new?op=MKDIRS&user.name=tester", 400),   # DFSUtil.isValidName
    ("/webhdfs/v1/./files?op=GETFILESTATUS", 400),
    ("/webhdfs/v1/a%00b?op=GETFILESTATUS", 400),
    ("/webhdfs/v1/a:b?op=GETFILESTATUS", 400),
    ("/webhdfs/v1/a%ffb?op=GETFILESTATUS", 400),
    ("/webhdfs/v1/files?op=GETFILESTATUS&user.name=%ff", 400),
    ("/webhdfs/v1/files?op=GETFILESTATUS&%ff=1", 400),
    ("/webhdfs/v1/files?op=%c3%28", 400),
    ("/webhdfs/v1/" + "a/" * 5000 + "?op=GETFILESTATUS", 400),
    ("/webhdfs/v1/" + "x" * 300 + "?op=MKDIRS&user.name=tester", 400),
]


@pytest.mark.parametrize("target,status", RAW_PATHS, ids=range(len(RAW_PATHS)))
def test_raw_malformed_targets_are_refused(w, target, status):
    method = "PUT" if "MKDIRS" in target else "GET"
    reply = w.raw(method, target)
    assert reply.status == status and "RemoteException" in reply.json, reply
    assert w.alive()


def test_invalid_utf8_bytes_sent_raw(nn, w):
    out = exchange(nn.port, b"GET /webhdfs/v1/a\xff\xfe?op=GETFILESTATUS HTTP/1.1\r\n"
                            b"Connection: close\r\n\r\n")
    [(status, body)] = parse_replies(out)
    assert status == 400 and b"RemoteException" in body
    raw_utf8 = "GET /webhdfs/v1/t/\u00e9?op=MKDIRS&user.name=tester HTTP/1.1\r\n" \
               "Connection: close\r\n\r\n"
    out = exchange(nn.port, raw_utf8.replace("GET", "PUT").encode())
    assert parse_replies(out) == [(200, b'{"boolean":true}')]
    assert "\u00e9" in w.names("/t")
    assert w.alive()


BAD_REQUESTS = {
    "garbage line": b"GARBAGE\r\n\r\n",
    "bad version": b"GET /webhdfs/v1/?op=GETFILESTATUS HTTP/2.0\r\n\r\n",
    "two spaces": b"GET  /webhdfs/v1/ HTTP/1.1\r\n\r\n",
    "header without colon": b"GET /webhdfs/v1/?op=GETFILESTATUS HTTP/1.1\r\nNoColon\r\n\r\n",
    "folded header": b"GET /webhdfs/v1/?op=GETFILESTATUS HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
    "negative length": b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
    "unicode length": "PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nContent-Length: \u00b2\r\n\r\n"
                      .encode("latin-1"),
    "gzip coding": b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
    "gzip then chunked": b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nTransfer-Encoding: gzip"
                         b"\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "two lengths": b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nContent-Length: 0\r\n"
                   b"Content-Length: 5\r\n\r\nhello",
    "bad chunk size": b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nTransfer-Encoding: chunked"
                      b"\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
    "negative chunk": b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nTransfer-Encoding: chunked"
                      b"\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
    "0x chunk": b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nTransfer-Encoding: chunked"
                b"\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
    "chunk overrun": b"PUT /webhdfs/v1/x?op=MKDIRS HTTP/1.1\r\nTransfer-Encoding: chunked"
                     b"\r\n\r\n2\r\nhello\r\n0\r\n\r\n",
    "star target": b"OPTIONS * HTTP/1.1\r\n\r\n",
    "relative target": b"GET webhdfs/v1/ HTTP/1.1\r\n\r\n",
}


@pytest.mark.parametrize("data", BAD_REQUESTS.values(), ids=BAD_REQUESTS.keys())
def test_malformed_requests_get_400_and_the_service_goes_on(nn, w, data):
    out = exchange(nn.port, data)
    [(status, body)] = parse_replies(out)
    assert status == 400 and "RemoteException" in json.loads(body), out
    assert w.alive()
    assert "x" not in w.names("/")


def test_huge_head_gets_431(nn, w):
    out = exchange(nn.port, b"GET /webhdfs/v1/?op=GETFILESTATUS HTTP/1.1\r\nX-Big: "
                   + b"a" * 300_000 + b"\r\n\r\n")
    assert parse_replies(out)[0][0] == 431
    out = exchange(nn.port, b"GET /webhdfs/v1/?" + b"a=1&" * 40_000 + b" HTTP/1.1\r\n\r\n")
    assert parse_replies(out)[0][0] == 431
    assert w.alive()


def test_huge_body_gets_413_even_while_the_client_is_still_sending(nn, w):
    body = b"x" * (3 << 20)        # nnlite.http.max-body is 1 MiB
    reply = w.call("PUT", "/t/huge", "MKDIRS", body=body)
    assert error(reply) == (413, "IllegalArgumentException")
    chunked = (b"PUT /webhdfs/v1/t/huge?op=MKDIRS&user.name=tester HTTP/1.1\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n"
               + b"100000\r\n" + b"y" * 0x100000 + b"\r\n" + b"10\r\n" + b"z" * 16 + b"\r\n"
               + b"0\r\n\r\n")
    assert parse_replies(exchange(nn.port, chunked))[0][0] == 413
    assert "huge" not in w.names("/t")
    assert w.alive()


def test_bodies_are_read_and_ignored(nn, w):
    reply = w.call("PUT", "/t/with-body", "MKDIRS", body=b'{"some": "json"}')
    assert reply.json == {"boolean": True}
    chunked = (b"PUT /webhdfs/v1/t/chunked?op=MKDIRS&user.name=tester HTTP/1.1\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n"
               b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n"
               b"GET /webhdfs/v1/t/chunked?op=GETFILESTATUS HTTP/1.1\r\n"
               b"Connection: close\r\n\r\n")
    replies = parse_replies(exchange(nn.port, chunked))
    assert [status for status, _ in replies] == [200, 200]
    assert json.loads(replies[1][1])["FileStatus"]["type"] == "DIRECTORY"


def test_truncated_requests_then_close(nn, w):
    for data in (b"GET /webhdfs/v1/?op=GETFI",
                 b"GET /webhdfs/v1/?op=GETFILESTATUS HTTP/1.1\r\nHost: x\r\n",
                 b"PUT /webhdfs/v1/t/trunc?op=MKDIRS&user.name=tester HTTP/1.1\r\n"
                 b"Content-Length: 100\r\n\r\nabc",
                 b"PUT /webhdfs/v1/t/trunc?op=MKDIRS&user.name=tester HTTP/1.1\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n10\r\nabc"):
        assert exchange(nn.port, data, shut=True, timeout=2) == b""
    assert "trunc" not in w.names("/t")
    assert w.alive()


def test_pipelined_requests_are_answered_in_order(nn):
    data = b"".join(b"GET /webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=u%d HTTP/1.1\r\n\r\n" % i
                    for i in range(50))
    data += b"GET /webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=last HTTP/1.1\r\n" \
            b"Connection: close\r\n\r\n"
    replies = parse_replies(exchange(nn.port, data))
    assert [json.loads(b)["Path"] for _, b in replies] == \
        [f"/user/u{i}" for i in range(50)] + ["/user/last"]


def test_many_pipelined_reads_then_a_half_close_are_all_answered_in_order(nn):
    """A connection answers 16 requests in a row, then lets the others have a turn: 300
    reads sent at once span many turns, and a half-close behind them waits for the last."""
    data = b"".join(b"GET /webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=p%d HTTP/1.1\r\n\r\n" % i
                    for i in range(300))
    replies = parse_replies(exchange(nn.port, data, shut=True))
    assert [json.loads(b)["Path"] for _, b in replies] == [f"/user/p{i}" for i in range(300)]


def test_pipelined_mutations_then_a_half_close_are_all_answered_in_order(nn, w):
    """Mutations are awaited (fsync) while the client's next requests wait in the buffer;
    a half-close sent behind them closes the connection only after the last answer."""
    w.mkdirs("/pipe")
    data = b"".join(b"PUT /webhdfs/v1/pipe/d%d?op=MKDIRS&user.name=tester HTTP/1.1\r\n"
                    b"Content-Length: 0\r\n\r\n"
                    b"GET /webhdfs/v1/pipe/d%d?op=GETFILESTATUS&user.name=tester HTTP/1.1\r\n"
                    b"\r\n" % (i, i) for i in range(20))
    replies = parse_replies(exchange(nn.port, data, shut=True))
    assert [status for status, _ in replies] == [200] * 40
    assert all(json.loads(b) == {"boolean": True} for _, b in replies[::2])
    assert [json.loads(b)["FileStatus"]["type"] for _, b in replies[1::2]] == ["DIRECTORY"] * 20
    assert w.names("/pipe") == sorted(f"d{i}" for i in range(20))
    assert w.alive()


def test_a_client_pipelining_far_ahead_is_paused_then_answered_in_order(nn, w):
    """1,500 writes sent at once: more than the 64 KiB a busy connection reads ahead, so
    reading pauses while a write is made durable and resumes after; every answer comes back,
    in order, and the connection closes after the last one."""
    w.mkdirs("/far")
    data = b"".join(b"PUT /webhdfs/v1/far/d%d?op=MKDIRS&user.name=tester HTTP/1.1\r\n"
                    b"Content-Length: 0\r\n\r\n" % i for i in range(1500))
    assert len(data) > 64 * 1024
    replies = parse_replies(exchange(nn.port, data, shut=True, timeout=60))
    assert [status for status, _ in replies] == [200] * 1500
    assert len(w.names("/far")) == 1500
    assert w.alive()


def test_lenient_but_valid_http(nn):
    """Bare LF line ends, empty lines before a request, an absolute-form target, HTTP/1.0,
    HEAD (the GET answer's head, no body: the next answer must still parse)."""
    data = (b"\r\nGET /webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=a HTTP/1.1\nHost: x\n\n"
            b"GET http://127.0.0.1/webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=b HTTP/1.1\r\n\r\n"
            b"HEAD /webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=c HTTP/1.1\r\n\r\n"
            b"GET /webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=d HTTP/1.0\r\n\r\n")
    out = exchange(nn.port, data)
    head_reply = out.split(b"\r\n\r\n")[2]
    assert head_reply.startswith(b'{"Path":"/user/b"}HTTP/1.1 200 OK')
    assert out.count(b"HTTP/1.1 200 OK") == 4
    assert out.endswith(b'{"Path":"/user/d"}') and b"/user/c" not in out


def test_a_client_that_never_reads_cannot_stall_the_service(nn, w):
    """Pipelined requests whose answers are never read: the service stops reading that
    connection and goes on serving everyone else, also while it still works through the
    requests it read (each connection answers 16 in a row, then the others get a turn)."""
    import socket
    sock = socket.create_connection(("127.0.0.1", nn.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    request = b"GET /webhdfs/v1/?op=GETCONTENTSUMMARY HTTP/1.1\r\n\r\n" * 200
    sent = 0
    try:
        for _ in range(500):
            try:
                sent += sock.send(request)
            except BlockingIOError:
                break
        assert w.alive()
    finally:
        sock.close()
    assert w.alive()


def test_the_operations_a_namenode_without_security_or_a_satisfier_answers(w, d):
    """GETDELEGATIONTOKEN under simple authentication is {"Token": null}; CHECKACCESS needs
    fsaction in FsActionParam's domain; GETSTATUS is FsStatus; a storage policy is a system
    xattr, never listed."""
    assert w.get("/", "GETDELEGATIONTOKEN").json == {"Token": None}
    missing = w.get(d, "CHECKACCESS")
    assert error(missing) == (400, "IllegalArgumentException")
    assert "Required param fsaction for op: CHECKACCESS" in missing.message
    assert error(w.get(d, "CHECKACCESS", fsaction="rw")) == (400, "IllegalArgumentException")
    assert w.get(d, "CHECKACCESS", fsaction="rwx").status == 200
    status = w.get("/", "GETSTATUS").json["FsStatus"]
    assert set(status) == {"capacity", "used", "remaining"}
    assert w.put(d, "SETSTORAGEPOLICY", storagepolicy="ALL_SSD").status == 200
    assert w.status(d)["storagePolicy"] == 12
    assert w.get(d, "LISTXATTRS").json == {"XAttrNames": "[]"}


def test_symlinks_are_off_as_in_hdfs_by_default(w, d):
    reply = w.put(d + "/link", "CREATESYMLINK", destination=d)
    assert error(reply) == (400, "UnsupportedOperationException")
    assert reply.message == "Symlinks not supported"
    reply = w.get(d, "GETLINKTARGET")
    assert error(reply) == (403, "IOException")
    assert reply.message == f"Path {d} is not a symbolic link"
    assert error(w.get(d + "/missing", "GETLINKTARGET")) == (404, "FileNotFoundException")


def test_erasure_coding_and_storage_type_quotas_answer_as_disabled(w, d):
    """Every EC policy disabled: a replicated path has no policy (JSON null); setting one
    is refused as FSDirErasureCodingOp refuses a policy that is not enabled."""
    reply = w.get(d, "GETECPOLICY")
    assert (reply.status, reply.body) == (200, b"null")
    assert w.get(d + "/missing", "GETECPOLICY").error == (404, "FileNotFoundException")
    policies = w.get("/", "GETECPOLICIES").json["ErasureCodingPolicies"]
    assert {p["state"] for p in policies["ErasureCodingPolicyInfo"]} == {"DISABLED"}
    assert w.put(d, "SETECPOLICY", ecpolicy="RS-6-3-1024k").error == \
        (400, "HadoopIllegalArgumentException")
    assert w.put("/", "ENABLEECPOLICY", ecpolicy="RS-6-3-1024k").error[1] == \
        "UnsupportedActionException"
    assert w.put("/", "ENABLEECPOLICY", ecpolicy="nope").error[1] == \
        "HadoopIllegalArgumentException"
    assert w.put("/", "DISABLEECPOLICY", ecpolicy="RS-6-3-1024k").status == 200
    assert w.put(d, "SETQUOTABYSTORAGETYPE", storagetype="SSD",
                 storagespacequota="10").error[1] == "UnsupportedActionException"
    assert w.put("/", "RENEWDELEGATIONTOKEN", token="x").error == (403, "IOException")
    cancel = w.put("/", "CANCELDELEGATIONTOKEN", token="x")
    assert cancel.status == 403 and cancel.json["RemoteException"]["exception"] == "InvalidToken"


# ------------------------------------------------------------------------------- /.reserved

def test_reserved_status_and_listing_are_jsonutils_of_hdfs(w):
    """GETFILESTATUS of /.reserved is JsonUtil.toJsonMap(FSDirectory.DOT_RESERVED_STATUS);
    LISTSTATUS shows createReservedStatuses' two directories."""
    assert w.status("/.reserved") == {
        "pathSuffix": "", "type": "DIRECTORY", "length": 0, "owner": "", "group": "",
        "permission": "1770", "accessTime": 0, "modificationTime": 0, "blockSize": 0,
        "replication": 0, "fileId": -1, "childrenNum": 0, "storagePolicy": 0}
    listed = w.get("/.reserved", "LISTSTATUS").json["FileStatuses"]["FileStatus"]
    assert [(s["pathSuffix"], s["permission"], s["group"]) for s in listed] == [
        (".inodes", "770", "supergroup"), ("raw", "770", "supergroup")]


def test_inode_paths_over_raw_http(w, d):
    """The fileId of GETFILESTATUS names the inode; ``<id>/..`` its parent (HDFS's one
    ``..``, for NFS, kept by the HTTP path); unknown and invalid ids answer FNF 404 with
    resolveDotInodesPath's messages."""
    w.mkdirs(d + "/sub")
    sub = w.status(d + "/sub")["fileId"]
    assert w.status(f"/.reserved/.inodes/{sub}")["fileId"] == sub
    assert w.status(f"/.reserved/.inodes/{sub}/..")["fileId"] == w.status(d)["fileId"]
    assert w.names(f"/.reserved/.inodes/{w.status(d)['fileId']}") == ["sub"]
    reply = w.get("/.reserved/.inodes/999999999", "GETFILESTATUS")
    assert error(reply) == (404, "FileNotFoundException")
    assert reply.json["RemoteException"]["message"] == \
        "File for given inode path does not exist: /.reserved/.inodes/999999999"
    reply = w.get("/.reserved/.inodes/x1", "LISTSTATUS")
    assert error(reply) == (404, "FileNotFoundException")
    assert reply.json["RemoteException"]["message"] == "Invalid inode path: /.reserved/.inodes/x1"
    reply = w.get(d + "/missing", "LISTSTATUS")
    assert reply.json["RemoteException"]["message"] == f"File {d}/missing does not exist."
    reply = w.get(f"/.reserved/.inodes/{sub}/missing", "GETFILESTATUS")      # as asked
    assert reply.json["RemoteException"]["message"] == \
        f"File does not exist: /.reserved/.inodes/{sub}/missing"
