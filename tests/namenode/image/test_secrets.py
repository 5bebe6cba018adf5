"""Delegation keys and tokens as namespace state (namenode/image/secrets.py and the door's
token calls): logged as ops, replayed at a restart, saved in the image's ``secret_manager``
section, and loaded from it, so a token issued before any of these is valid after it;
simple mode issues none and refuses as it always did."""

import pytest

from nnlite.formats import edits
from nnlite.formats.fsimage.read import read_meta
from nnlite.formats.hadoop import client_namenode as cn
from nnlite.formats.hadoop import security as sec
from nnlite.formats.hadoop.acl import FsPermissionProto
from nnlite.namenode.config import Config
from nnlite.namenode.errors import AccessControlError, InvalidTokenError, NamenodeError
from nnlite.namenode.fsnamesystem import FSNamesystem
from nnlite.namenode.image import columns, secrets, startup
from nnlite.namenode.security.auth_to_local import AuthToLocal
from nnlite.namenode.security.identity import Caller
from nnlite.namenode.security.settings import SecuritySettings
from nnlite.namenode.security.tokens import DelegationTokenIdentifier, Token
from nnlite.namenode.storage.namedir import NameDir
from tests.kerberos_realm import Principal
from tests.namenode.ha.haset import HASet
from tests.namenode.helpers import IDENTITY, acked, formatted
from tests.namenode.http.secure import kerberos_session, server_env
from tests.namenode.http.secure import secure_args as http_secure_args
from tests.namenode.security.sasl_client import Refused, SaslClient
from tests.servers import NamenodeProcess, wait_for

T0 = 1_700_000_000_000
DAY = 86_400_000
SETTINGS = SecuritySettings.from_config(Config({
    "hadoop.security.authentication": "kerberos",
    "dfs.namenode.kerberos.principal": "nn/_HOST@NNLITE.TEST",
    "dfs.namenode.keytab.file": "/nonexistent/nn.keytab",
    "dfs.web.authentication.kerberos.principal": "HTTP/_HOST@NNLITE.TEST"}))
RULES = AuthToLocal("DEFAULT", "NNLITE.TEST")
ALICE = Caller("alice", "127.0.0.1", "KERBEROS", None, "alice@NNLITE.TEST")
YARN = Caller("yarn", "127.0.0.1", "KERBEROS", None, "yarn/rm@NNLITE.TEST")


class Clock:
    now = T0

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock():
    return Clock()


def open_secure(dirs, clock, start=True) -> FSNamesystem:
    fs = FSNamesystem.open(dirs, IDENTITY, clock=clock)
    fs.enable_delegation_tokens(SETTINGS, RULES)
    if start:
        acked(fs).start_delegation_tokens()
    return fs


def issue(fs, caller=ALICE, renewer="yarn"):
    return fs.durable(fs.get_delegation_token(caller.user, renewer, caller))


def logged_codes(dirs) -> list[int]:
    reader = edits.EditsReader(str(NameDir(dirs[0]).file("edits")))
    return [op.CODE for _, op in reader]


def test_simple_mode_issues_nothing_and_refuses_as_before(tmp_path):
    dirs = formatted(tmp_path)
    with FSNamesystem.open(dirs, IDENTITY) as fs:
        assert fs.get_delegation_token("alice") is None
        with pytest.raises(NamenodeError, match="can be renewed only with kerberos"):
            fs.renew_delegation_token("alice")
        with pytest.raises(InvalidTokenError, match="Token not found"):
            fs.cancel_delegation_token("alice")


def test_a_token_is_logged_and_valid_after_a_restart(tmp_path, clock):
    dirs = formatted(tmp_path)
    with open_secure(dirs, clock) as fs:
        token = issue(fs)
        ident = fs.verify_delegation_token(token)
    assert logged_codes(dirs)[-2:] == [edits.OpCode.UPDATE_MASTER_KEY,
                                       edits.OpCode.GET_DELEGATION_TOKEN]
    with open_secure(dirs, clock) as fs:                     # replayed from the edits
        assert fs.verify_delegation_token(token) == ident
        assert fs.delegation_token_password(token.identifier) == token.password
        assert ident == DelegationTokenIdentifier("alice@NNLITE.TEST", "yarn", "", T0,
                                                  T0 + 7 * DAY, 1, 1)
        second = issue(fs)                                   # numbering carries on
        assert fs.verify_delegation_token(second).sequence_number == 2
        assert fs.verify_delegation_token(second).master_key_id == 2


def test_renewal_and_cancel_survive_a_restart_and_a_saved_image(tmp_path, clock):
    dirs = formatted(tmp_path)
    with open_secure(dirs, clock) as fs:
        kept, gone = issue(fs), issue(fs)
        clock.now += DAY // 2
        assert acked(fs).renew_delegation_token("yarn", kept, YARN) == T0 + DAY + DAY // 2
        acked(fs).cancel_delegation_token("alice", gone, ALICE)
        fs.set_safe_mode(True)
        fs.save_namespace()
        fs.set_safe_mode(False)
    assert logged_codes(dirs)[1:] == []                      # everything is in the image now
    clock.now += DAY                                         # past the first expiry
    with open_secure(dirs, clock, start=False) as fs:        # loaded from the image
        assert fs.verify_delegation_token(kept).owner == "alice@NNLITE.TEST"
        with pytest.raises(InvalidTokenError, match="can't be found in cache"):
            fs.verify_delegation_token(gone)
        assert secrets.SECTION in _image_sections(dirs)


def test_renew_and_cancel_follow_hadoops_rules_at_the_door(tmp_path, clock):
    dirs = formatted(tmp_path)
    with open_secure(dirs, clock) as fs:
        token = issue(fs)
        with pytest.raises(AccessControlError, match="non-matching renewer yarn"):
            fs.renew_delegation_token("alice", token, ALICE)
        holder = Caller("alice", "127.0.0.1", "TOKEN", None, "alice@NNLITE.TEST")
        with pytest.raises(NamenodeError, match="can be issued only with kerberos"):
            fs.get_delegation_token("alice", "yarn", holder)
        with pytest.raises(NamenodeError, match="can be renewed only with kerberos"):
            fs.renew_delegation_token("yarn", token, Caller("yarn", "h", "TOKEN"))
        bob = Caller("bob", "127.0.0.1", "KERBEROS", None, "bob@NNLITE.TEST")
        with pytest.raises(AccessControlError, match="is not authorized to cancel"):
            fs.cancel_delegation_token("bob", token, bob)


def test_keys_roll_on_the_active_and_expired_tokens_go(tmp_path, clock):
    dirs = formatted(tmp_path)
    with open_secure(dirs, clock) as fs:
        token = issue(fs)
        assert fs.delegation_housekeeping().txid == 0        # nothing due: nothing logged
        clock.now += DAY + 1
        removed = fs.durable(fs.delegation_housekeeping())
        assert removed == 1 and fs.tokens.current_key_id == 2
        with pytest.raises(InvalidTokenError, match="can't be found in cache"):
            fs.verify_delegation_token(token)
    assert logged_codes(dirs)[-2:] == [edits.OpCode.UPDATE_MASTER_KEY,
                                       edits.OpCode.CANCEL_DELEGATION_TOKEN]


def test_no_token_while_the_secret_manager_is_not_started(tmp_path, clock):
    dirs = formatted(tmp_path)
    with open_secure(dirs, clock, start=False) as fs:       # a standby, say
        assert fs.get_delegation_token("alice", "yarn", ALICE) is None


def test_summary_hides_the_secrets(tmp_path, clock):
    dirs = formatted(tmp_path)
    with open_secure(dirs, clock) as fs:
        issue(fs)
        data = secrets.encode(fs.ns.tree.secrets.state())
        key = fs.ns.tree.secrets.keys[1].secret
    summary = secrets.summary(data)
    assert summary["keys"] == [{"id": 1, "expiry_date": T0 + 8 * DAY}]
    assert summary["tokens"][0]["owner"] == "alice@NNLITE.TEST"
    assert key.hex() not in repr(summary) and "secret" not in repr(summary)
    with pytest.raises(NamenodeError, match="does not parse"):
        secrets.decode(b"\x93\x01")


def _image_sections(dirs) -> dict:
    return read_meta(str(NameDir(dirs[0]).file("fsimage"))).sections


# --------------------------------------------- a namenode process: kill -9, restart, save

def secure_args(kdc, keytab) -> tuple:
    return ("-D", "hadoop.security.authentication=kerberos",
            "-D", f"dfs.namenode.kerberos.principal=nn/_HOST@{kdc.name}",
            "-D", f"dfs.namenode.keytab.file={keytab}",
            "-D", f"dfs.web.authentication.kerberos.principal=HTTP/_HOST@{kdc.name}",
            "-D", f"dfs.web.authentication.kerberos.keytab={keytab}")


def rpc_token(port, user):
    """getDelegationToken over Kerberos SASL, as DistributedFileSystem asks for one."""
    with SaslClient(port).kerberos(user.ccache).context() as client:
        answer = client.answer("getDelegationToken",
                               sec.GetDelegationTokenRequestProto(renewer=user.short))
    assert answer.HasField("token"), "the namenode issued no token"
    return answer.token


def owner_through(port, token, path: str) -> str:
    """Make ``path`` on a connection the token authenticates; the owner it gets."""
    with SaslClient(port).token(token.identifier, token.password).context() as client:
        client.answer("mkdirs", cn.MkdirsRequestProto(
            src=path, masked=FsPermissionProto(perm=0o755), createParent=True))
        return client.answer("getFileInfo", cn.GetFileInfoRequestProto(src=path)).fs.owner


def test_a_token_survives_kill_9_right_after_it_is_answered_and_a_saved_image(
        kdc, start_namenode, tmp_path):
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    alice = kdc.user("alice")
    args = secure_args(kdc, keytab)
    nn = start_namenode(*args, env=kdc.env_for(), users="alice=supergroup")
    token = rpc_token(nn.rpc_port, alice)
    nn.kill()                                       # SIGKILL: the answer was all it gave
    nn = start_namenode(*args, name_dirs=nn.name_dirs, env=kdc.env_for(),
                        users="alice=supergroup")
    assert owner_through(nn.rpc_port, token, "/after-kill") == "alice"
    service = kdc.service("nn")         # the superuser, in secure mode: nn's short name
    superuser = Principal(service.name, service.keytab, tmp_path / "nn.ccache")
    kdc.kinit(superuser)
    with SaslClient(nn.rpc_port).kerberos(superuser.ccache).context() as client:
        client.answer("setSafeMode", cn.SetSafeModeRequestProto(
            action=cn.SafeModeActionProto.SAFEMODE_ENTER))
        client.answer("saveNamespace", cn.SaveNamespaceRequestProto())
        client.answer("setSafeMode", cn.SetSafeModeRequestProto(
            action=cn.SafeModeActionProto.SAFEMODE_LEAVE))
    nn.stop()
    assert secrets.SECTION in _image_sections(nn.name_dirs)
    nn = start_namenode(*args, name_dirs=nn.name_dirs, env=kdc.env_for(),
                        users="alice=supergroup")
    assert owner_through(nn.rpc_port, token, "/after-save") == "alice"



def test_a_standby_applies_the_token_ops_and_its_tokens_work_after_it_takes_over(
        tmp_path, clock):
    """The tailer's step (``apply_replicated``, the replay appliers on the active's framed
    records): the standby knows every token, and once it starts issuing (a failover) the
    job's token verifies and renews there, and numbering carries on."""
    active_dirs, standby_dirs = formatted(tmp_path / "a"), formatted(tmp_path / "b")
    with open_secure(active_dirs, clock) as active, \
            open_secure(standby_dirs, clock, start=False) as standby:
        token = issue(active)
        records = active.local_records(0)
        data = b"".join(raw for _, raw in records)
        standby.apply_replicated(data, records[0][0], records[-1][0])
        assert standby.verify_delegation_token(token) == active.verify_delegation_token(token)
        assert standby.ns.tree.secrets.state() == active.ns.tree.secrets.state()
        active.stop_delegation_tokens()                 # the active is gone; the standby wins
        acked(standby).start_delegation_tokens()
        clock.now += DAY // 2
        assert acked(standby).renew_delegation_token("yarn", token, YARN) > T0 + DAY
        second = standby.verify_delegation_token(issue(standby))
        assert (second.sequence_number, second.master_key_id) == (2, 2)


def test_the_secondarys_merge_keeps_every_token(tmp_path, clock):
    """What ``secondary/merge.py`` does with what it downloads: load the image, replay the
    edits with ``startup.replay``, save with ``columns.save``: the merged image holds the
    active's keys and live tokens, the cancelled one gone."""
    dirs = formatted(tmp_path)
    with open_secure(dirs, clock) as fs:
        issue(fs)
        gone = issue(fs)
        acked(fs).cancel_delegation_token("alice", gone, ALICE)
        last = fs.last_written_txid
        expected = fs.ns.tree.secrets.state()
    name_dir = NameDir(dirs[0])
    tree, meta = columns.load(str(name_dir.file("fsimage")), None)
    reader, _ = startup.replay(tree, str(name_dir.file("edits")), meta.last_txid,
                               meta.last_txid + 1)
    assert reader.last_txid == last and tree.secrets.state() == expected
    merged = tmp_path / "fsimage.ckpt"
    columns.save(tree, str(merged), meta.namespace_id, last)
    loaded, _ = columns.load(str(merged), None)
    assert loaded.secrets.state() == expected


def test_a_webhdfs_token_survives_kill_9_right_after_getdelegationtoken(
        kdc, start_namenode, tmp_path):
    """GETDELEGATIONTOKEN over SPNEGO is answered only once its op is durable: SIGKILL the
    namenode right after the answer, restart it, and ``delegation=`` still acts as alice."""
    requests = pytest.importorskip("requests")
    nn = start_namenode(*http_secure_args(kdc), env=server_env(kdc), users="alice=supergroup")
    alice = kerberos_session(kdc.user("alice"))
    answer = alice.get(f"http://localhost:{nn.port}/webhdfs/v1/?op=GETDELEGATIONTOKEN")
    assert answer.status_code == 200, answer.text
    token = answer.json()["Token"]["urlString"]
    nn.kill()
    nn = start_namenode(*http_secure_args(kdc), name_dirs=nn.name_dirs, env=server_env(kdc),
                        users="alice=supergroup")
    base = f"http://localhost:{nn.port}/webhdfs/v1/after-kill"
    made = requests.put(f"{base}?op=MKDIRS&delegation={token}")
    assert made.status_code == 200 and made.json() == {"boolean": True}, made.text
    status = requests.get(f"{base}?op=GETFILESTATUS&delegation={token}").json()
    assert status["FileStatus"]["owner"] == "alice"
    issued = Token.decode_url(token)
    forged = Token(issued.identifier, bytes(len(issued.password)), issued.kind, issued.service)
    refused = requests.get(f"{base}?op=GETFILESTATUS&delegation={forged.encode_url()}")
    assert refused.status_code == 403 and "password doesn't match" in refused.text


class SecureHASet(HASet):
    """``HASet`` with Kerberos on: each namenode process gets the realm's environment."""

    def __init__(self, tmp_path, etcd, env: dict[str, str], settings: dict[str, str]):
        super().__init__(tmp_path, etcd, settings=settings)
        self.env = env

    def start(self, i: int, timeout: float = 30) -> NamenodeProcess:
        node = NamenodeProcess.start([self.dirs[i]], "--port", str(self.ports[i]),
                                     "--rpc-port", str(self.rpc_ports[i]), "--conf",
                                     str(self.conf), "-D", f"dfs.ha.namenode.id={self.ids[i]}",
                                     timeout=timeout, env=self.env)
        self.nodes[i] = node
        return node


def test_a_token_works_on_the_new_active_once_the_active_is_killed(kdc, etcd_cluster,
                                                                   tmp_path):
    """An HA set in secure mode: alice's token, issued by the active (its ops in the shared
    journal before the answer), authenticates her on the standby once it has taken over
    from the SIGKILLed active, which then renews it for her and issues the next one."""
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    args = secure_args(kdc, keytab)
    settings = dict(arg.split("=", 1) for arg in args[1::2])
    settings["hadoop.user.group.static.mapping.overrides"] = "alice=supergroup"
    alice = kdc.user("alice")
    haset = SecureHASet(tmp_path, etcd_cluster, kdc.env_for(), settings)
    try:
        active = haset.start_all()
        token = rpc_token(haset.rpc_ports[active], alice)
        assert owner_through(haset.rpc_ports[active], token, "/before") == "alice"
        haset.kill(active)
        new = haset.active(excluding=active)
        assert owner_through(haset.rpc_ports[new], token, "/after-failover") == "alice"
        with SaslClient(haset.rpc_ports[new]).kerberos(alice.ccache).context() as client:
            renewed = client.answer("renewDelegationToken",
                                    sec.RenewDelegationTokenRequestProto(token=token))
        assert renewed.newExpiryTime > 0
        following = DelegationTokenIdentifier.decode(
            rpc_token(haset.rpc_ports[new], alice).identifier)
        assert (following.sequence_number, following.master_key_id) == (2, 2)
    finally:
        haset.close()


def test_the_active_rolls_its_master_key_and_logs_expired_tokens_away(kdc, start_namenode,
                                                                      tmp_path):
    """The daemon's ExpiredTokenRemover loop: with a 1.5 s key-update interval a new master
    key comes (logged), a token under the old key still authenticates, and a token past its
    4 s renew interval is removed with a logged cancel (the edits say so)."""
    keytab = kdc.keytab_of(kdc.service("nn"), kdc.service("HTTP"), path=tmp_path / "nn.keytab")
    nn = start_namenode(*secure_args(kdc, keytab),
                        "-D", "dfs.namenode.delegation.key.update-interval=1500",
                        "-D", "dfs.namenode.delegation.token.renew-interval=4000",
                        env=kdc.env_for(), users="alice=supergroup")
    alice = kdc.user("alice")
    first = rpc_token(nn.rpc_port, alice)

    def under_a_new_key():
        token = rpc_token(nn.rpc_port, alice)
        ident = DelegationTokenIdentifier.decode(token.identifier)
        return token if ident.master_key_id > 1 else None
    later = wait_for(under_a_new_key, 30, "a token under the next master key", interval=0.5)
    assert owner_through(nn.rpc_port, later, "/later") == "alice"

    def first_removed() -> bool:
        with SaslClient(nn.rpc_port) as client:
            try:
                client.token(first.identifier, first.password)
            except Refused as exc:
                return "can't be found in cache" in exc.message
        return False
    wait_for(first_removed, 30, "the expired token to be removed", interval=0.5)
    nn.stop()
    codes = logged_codes(nn.name_dirs)
    assert codes.count(edits.OpCode.UPDATE_MASTER_KEY) >= 2
    assert edits.OpCode.CANCEL_DELEGATION_TOKEN in codes
