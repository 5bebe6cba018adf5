"""peer.py: the client between namenodes against scripted peers (tests/client/fake.py): the
/isActive probe and the pulse (a refused connect is the process gone, a close is seen), the
JSON calls and their refusals, a download's checks, the block report; the image and block
transfers against a real namenode are tests/secondary and tests/namenode/blocks."""

from __future__ import annotations

import hashlib

import pytest

from nnlite.client import errors, peer
from nnlite.client.peer import Peer, Pulse
from tests.client.fake import FakeNamenode, reply
from tests.servers import closed_port

SECRET = "s3cret"


@pytest.fixture
def fake():
    made = []

    def make(script):
        made.append(FakeNamenode(script))
        return made[-1]

    yield make
    for namenode in made:
        namenode.close()


@pytest.mark.parametrize("answer, said", [(reply(200), None),
                                           (reply(503), "not active (HTTP 503)")])
def test_is_active_says_none_only_for_a_200(fake, answer, said):
    nn = fake([(answer, True)])
    assert Peer(nn.url, SECRET).is_active() == said
    assert nn.requests[0].startswith(b"GET /isActive ")


def test_is_active_names_a_refused_connection():
    assert Peer(f"127.0.0.1:{closed_port()}", SECRET).is_active() == "connection refused"


def test_roll_is_the_json_of_the_answer_and_a_refusal_is_typed(fake):
    nn = fake([(reply(200, b'{"txid": 7}'), False),
               (reply(409, b'{"error": "busy", "status": 409}'), True)])
    client = Peer(nn.url, SECRET)
    assert client.roll() == {"txid": 7}
    with pytest.raises(peer.PeerRefusedError) as err:
        client.roll()
    assert err.value.status == 409 and err.value.message == "busy"
    assert str(err.value) == f"namenode refused (409): busy ({nn.url}/checkpoint/roll)"
    assert [r.split(b" ")[:2] for r in nn.requests] == [[b"POST", b"/checkpoint/roll"]] * 2


def test_an_answer_that_is_not_json_is_a_protocol_error(fake):
    nn = fake([(reply(200, b"<html>"), True)])
    with pytest.raises(errors.ProtocolError, match="not a namenode's transfer endpoint"):
        Peer(nn.url, SECRET).status()


def test_cede_asks_the_active_to_give_way(fake):
    nn = fake([(reply(200, b"{}"), True)])
    Peer(nn.url, SECRET).cede(12, "hdfs")
    assert nn.requests[0].startswith(
        b"POST /admin?op=TRANSITIONTOSTANDBY&cede=12&user.name=hdfs ")


def _image(body: bytes, md5: str | None = None, length: int | None = None) -> bytes:
    md5 = md5 or hashlib.md5(body).hexdigest()
    head = (f"HTTP/1.1 200 OK\r\nContent-Length: {len(body) if length is None else length}"
            f"\r\n{peer.MD5_HEADER}: {md5}\r\n{peer.IMAGE_TXID_HEADER}: 42\r\n\r\n")
    return head.encode() + body


def test_a_download_is_verified_then_published(fake, tmp_path):
    nn = fake([(_image(b"x" * 1000), True)])
    halves = []
    got = Peer(nn.url, SECRET, chunk_size=64).download(
        "/image", tmp_path / "fsimage", peer.IMAGE_TXID_HEADER,
        halfway=lambda: halves.append("half"))
    assert (got.size, got.last_txid, got.md5) == (1000, 42, hashlib.md5(b"x" * 1000).hexdigest())
    assert (tmp_path / "fsimage").read_bytes() == b"x" * 1000 and halves == ["half"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fsimage"]


@pytest.mark.parametrize("answer, error", [
    (_image(b"abc", md5="0" * 32), peer.DigestMismatchError),
    (_image(b"abc", length=10), peer.ShortTransferError),
], ids=["bad-digest", "cut-short"])
def test_a_damaged_download_publishes_nothing(fake, tmp_path, answer, error):
    nn = fake([(answer, True)])
    with pytest.raises(error):
        Peer(nn.url, SECRET).download("/image", tmp_path / "fsimage", peer.IMAGE_TXID_HEADER)
    assert list(tmp_path.iterdir()) == []


def test_a_block_report_is_the_set_of_ids(fake):
    nn = fake([(reply(200, b'{"blocks": [3, 1]}'), False), (reply(200, b"{}"), True)])
    with Peer(nn.url, SECRET) as standby:
        assert standby.block_report() == {1, 3}
        with pytest.raises(errors.ProtocolError, match="not a list of ids"):
            standby.block_report()
    assert nn.connections == 1          # the block calls share one kept-alive connection


def test_a_missing_block_opens_as_none(fake):
    nn = fake([(reply(404, b'{"error": "no"}'), True)])
    with Peer(nn.url, SECRET) as standby:
        assert standby.open_block(5) is None
    assert nn.requests[0].startswith(b"GET /blocks/v1/blk_5 ")


# ------------------------------------------------------------------------------- the pulse

def test_a_pulse_to_a_closed_port_is_refused():
    with pytest.raises(ConnectionRefusedError):
        Pulse.open(f"127.0.0.1:{closed_port()}")


def test_the_pulse_asks_on_one_connection_until_the_peer_closes_it(fake):
    nn = fake([(reply(200), False), (reply(200), True)])
    target = nn.url.removeprefix("http://")
    with Pulse.open(target) as pulse:
        assert pulse.ask() and not pulse.closed(0.05)
        assert pulse.ask() and pulse.closed(2.0)       # the second answer closed it
    assert nn.connections == 1 and len(nn.requests) == 2


def test_the_pulse_of_a_namenode_not_active_says_so(fake):
    nn = fake([(reply(503, b"standby"), False)])
    with Pulse.open(nn.url.removeprefix("http://")) as pulse:
        assert not pulse.ask()
