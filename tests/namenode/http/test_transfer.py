"""Image uploads the namenode must refuse, each with its status and a message that says why,
and each leaving the name directory byte for byte as it was.

One namenode serves the module: it holds a finished checkpoint (so an older image exists to
replay) and a pending one, for which a good image was built by a checkpointer whose upload
failed on purpose. Every refusal is sent against that pending checkpoint; the last test then
uploads the good image and it is accepted, so no refusal left the checkpoint stuck.
"""

from __future__ import annotations

import hashlib
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from nnlite.durability import faults
from nnlite.namenode.storage.namedir import CKPT, NameDir
from nnlite.secondary.errors import TRANSFER_FAILURES
from tests.namenode.namedirs import snapshot
from tests.secondary.conftest import mkdirs, new_checkpointer, secret_of
from tests.servers import NamenodeProcess, wait_for


def uploading(pending) -> bool:
    """An upload's own file (``install.upload_file``) is in the name dir; never the
    ``fsimage.ckpt`` a local save installs through."""
    current = NameDir(pending.name_dir).current
    assert not (current / CKPT).exists()
    return any(current.glob(f"{CKPT}_*"))


@dataclass
class Pending:
    server: NamenodeProcess
    secret: str
    namespace_id: int
    txid: int             # the pending checkpoint's txid
    image: bytes          # a good image for it
    md5: str
    old_txid: int         # the checkpoint already in place, and its image
    old_image: bytes
    old_md5: str

    @property
    def name_dir(self) -> Path:
        return NameDir(self.server.name_dirs[0]).root


@pytest.fixture(scope="module")
def pending(start_module_namenode, tmp_path_factory):
    server = start_module_namenode()
    with new_checkpointer(server, tmp_path_factory.mktemp("refusals") / "ckpt") as cp:
        mkdirs(server, "/a", "/a/b")
        old = cp.do_checkpoint()
        old_image = cp.dir.image_path.read_bytes()
        mkdirs(server, "/c")
        faults.configure("secondary.during-upload=error")
        try:
            with pytest.raises(TRANSFER_FAILURES):
                cp.do_checkpoint()
        finally:
            faults.configure("")
        saved = cp.namespace_txid
        image = cp.dir.image_path.read_bytes()
        status = cp.client.status()
    assert status.pending and status.edits.last_txid == saved
    return Pending(server, secret_of(server), status.namespace_id, saved, image,
                   hashlib.md5(image).hexdigest(),
                   old.last_txid, old_image, old.image_md5)


def put(p: Pending, body: bytes, *, txid: int | None = None, namespace_id: int | None = None,
        md5: str | None = None, secret: str | None = None) -> requests.Response:
    params = {"txid": p.txid if txid is None else txid,
              "namespaceid": p.namespace_id if namespace_id is None else namespace_id}
    headers = {"X-Nnlite-Secret": p.secret if secret is None else secret,
               "X-MD5-Digest": p.md5 if md5 is None else md5}
    return requests.put(p.server.url + "/checkpoint/image", params=params, headers=headers,
                        data=body, timeout=10)


def raw_head(p: Pending, length: int) -> socket.socket:
    """A raw connection that sent the head of a good upload of ``length`` bytes."""
    sock = socket.create_connection(("127.0.0.1", p.server.port), timeout=10)
    sock.sendall((f"PUT /checkpoint/image?txid={p.txid}&namespaceid={p.namespace_id} "
                  f"HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Nnlite-Secret: {p.secret}\r\n"
                  f"X-MD5-Digest: {p.md5}\r\nContent-Length: {length}\r\n\r\n").encode())
    return sock


def read_answer(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def flipped(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:]


REFUSALS = {
    "flipped-byte": (lambda p: put(p, flipped(p.image)), 400, "does not match the announced"),
    "txid-past-the-edits": (lambda p: put(p, p.image, txid=10**9), 409,
                            "this namenode's edits end at txid"),
    "image-short-of-its-txid": (lambda p: put(p, p.image, txid=p.txid + 1), 400,
                                "; expected"),
    "replayed-old-image": (lambda p: put(p, p.old_image, txid=p.old_txid, md5=p.old_md5), 410,
                           "is already in place"),
    "wrong-namespace": (lambda p: put(p, p.image, namespace_id=p.namespace_id + 1), 403,
                        "this namenode serves namespace"),
    "wrong-secret": (lambda p: put(p, p.image, secret="0" * 64), 403, "shared secret"),
    "no-secret": (lambda p: put(p, p.image, secret=""), 403, "shared secret"),
    "body-of-an-older-image": (lambda p: put(p, p.old_image, md5=p.old_md5), 400,
                               "is for namespace"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refused_and_nothing_changes_on_disk(pending, case):
    send, status, message = REFUSALS[case]
    before = snapshot(pending.name_dir)
    resp = send(pending)
    assert resp.status_code == status, resp.text
    assert resp.json()["status"] == status and message in resp.json()["error"], resp.text
    assert snapshot(pending.name_dir) == before


def test_truncated_body_then_half_close_is_400(pending):
    before = snapshot(pending.name_dir)
    sock = raw_head(pending, len(pending.image))
    try:
        sock.sendall(pending.image[:len(pending.image) // 2])
        sock.shutdown(socket.SHUT_WR)
        answer = read_answer(sock)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert b"cut short" in answer, answer
    assert snapshot(pending.name_dir) == before


def test_connection_closed_mid_body_changes_nothing(pending):
    before = snapshot(pending.name_dir)
    sock = raw_head(pending, len(pending.image))
    sock.sendall(pending.image[:len(pending.image) // 2])
    wait_for(lambda: uploading(pending), 10, "an upload to start")
    sock.close()
    wait_for(lambda: not uploading(pending), 10, "the upload's file to go")
    assert snapshot(pending.name_dir) == before


def test_concurrent_second_upload_is_409(pending):
    before = snapshot(pending.name_dir)
    first = raw_head(pending, len(pending.image))
    try:
        first.sendall(pending.image[:100])
        wait_for(lambda: uploading(pending), 10, "an upload to start")
        resp = put(pending, pending.image)
        assert resp.status_code == 409 and "already uploading" in resp.json()["error"]
    finally:
        first.close()           # the first upload is abandoned: its file is removed
    wait_for(lambda: not uploading(pending), 10, "the upload's file to go")
    assert snapshot(pending.name_dir) == before


def test_the_good_image_is_accepted_after_every_refusal(pending):
    resp = put(pending, pending.image)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"txid": pending.txid, "size": len(pending.image),
                           "md5": pending.md5}
    again = put(pending, pending.image)            # the same image once more: in place
    assert again.status_code == 410, again.text
