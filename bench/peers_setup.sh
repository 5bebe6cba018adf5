#!/usr/bin/env bash
# Set up the peers of /work/shared/peers (ZooKeeper 3.8, etcd 3.4 and their Python clients) as its
# README.md says. Idempotent: each step is skipped when its result is already there.
#   bash bench/peers_setup.sh            (as root: it uses apt-get)
# Env: PEERVENV (default /tmp/peervenv), PROTO_DIR (default /tmp/etcd3proto).
set -euo pipefail

PEERVENV=${PEERVENV:-/tmp/peervenv}
PROTO_DIR=${PROTO_DIR:-/tmp/etcd3proto}
PY="$PEERVENV/bin/python"

say() { echo "peers_setup: $*"; }

# 1. Debian packages: etcd 3.4 and ZooKeeper 3.8 (jars in /usr/share/java). Java 17 must be there.
if command -v etcd >/dev/null && [ -f /usr/share/java/zookeeper.jar ] && command -v etcdctl >/dev/null; then
    say "etcd and zookeeper already installed"
else
    say "installing etcd-server etcd-client zookeeper"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y etcd-server etcd-client zookeeper
fi
command -v javac >/dev/null || { say "javac missing (LeanLoad.java needs a JDK 17)"; exit 1; }

# 2. The peers' Python clients in their own venv.
[ -x "$PY" ] || python3 -m venv "$PEERVENV"
if "$PY" -c 'import kazoo, requests, grpc_tools' 2>/dev/null && "$PY" -m pip show etcd3 >/dev/null 2>&1; then
    say "venv $PEERVENV already has kazoo requests etcd3 grpcio-tools"
else
    "$PY" -m pip install kazoo requests etcd3 grpcio-tools
fi

# 3. etcd3 0.12.0's generated *_pb2.py do not import with protobuf >= 4: regenerate them.
RPC_DIR=$("$PY" -c 'import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("etcd3").origin), "etcdrpc"))')
if "$PY" -c 'import etcd3' 2>/dev/null; then
    say "etcd3 imports: stubs already regenerated"
else
    mkdir -p "$PROTO_DIR/src" "$PROTO_DIR/out"
    cd "$PROTO_DIR/src"
    if [ -f auth.proto ] && [ -f kv.proto ] && [ -f rpc.proto ]; then
        # The README's way: the project's own .proto files (kragniz/python-etcd3 etcd3/proto/).
        say "regenerating stubs from $PROTO_DIR/src/{auth,kv,rpc}.proto"
        "$PY" -m grpc_tools.protoc -I. --python_out=../out --grpc_python_out=../out auth.proto kv.proto rpc.proto
    else
        # No .proto sources here (the PyPI package does not ship them): use the exact file
        # descriptors that the installed package's own *_pb2.py embed, so the stubs describe the
        # same messages and services as the installed etcd3 version.
        say "no .proto files in $PROTO_DIR/src: regenerating from the descriptors embedded in $RPC_DIR"
        "$PY" - "$RPC_DIR" etcd3rpc.descset <<'PYEOF'
import ast, os, sys
from google.protobuf import descriptor_pb2

def serialized(path):
    """The serialized FileDescriptorProto in a generated *_pb2.py, old style or new style."""
    for node in ast.walk(ast.parse(open(path).read())):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:                      # protoc 3.x: FileDescriptor(serialized_pb=_b('...'))
            if kw.arg == "serialized_pb":
                v = kw.value.args[0] if isinstance(kw.value, ast.Call) else kw.value
                return v.value.encode("latin1") if isinstance(v.value, str) else v.value
        f = node.func                                 # protoc >= 3.20: AddSerializedFile(b'...')
        if isinstance(f, ast.Attribute) and f.attr == "AddSerializedFile":
            return node.args[0].value
    raise SystemExit(f"no serialized descriptor found in {path}")

rpc_dir, out = sys.argv[1:]
fds = descriptor_pb2.FileDescriptorSet()
for name in ("kv", "auth", "rpc"):                    # dependencies first
    fd = fds.file.add()
    fd.ParseFromString(serialized(os.path.join(rpc_dir, f"{name}_pb2.py")))
    assert fd.name == f"{name}.proto", fd.name
with open(out, "wb") as f:
    f.write(fds.SerializeToString())
print("peers_setup: wrote", out, [(fd.name, len(fd.message_type), len(fd.service)) for fd in fds.file])
PYEOF
        "$PY" -m grpc_tools.protoc --descriptor_set_in=etcd3rpc.descset --python_out=../out \
            --grpc_python_out=../out auth.proto kv.proto rpc.proto
    fi
    cd ../out
    sed -i 's/^import \(kv\|auth\|rpc\)_pb2 as/from etcd3.etcdrpc import \1_pb2 as/' rpc_pb2.py rpc_pb2_grpc.py
    cp auth_pb2.py kv_pb2.py rpc_pb2.py rpc_pb2_grpc.py "$RPC_DIR/"
fi

# 4. Check.
"$PY" - <<'PYEOF'
import etcd3, kazoo, google.protobuf
from google.protobuf.internal import api_implementation
print(f"peers_setup: ok: etcd3 {etcd3.__version__}, protobuf {google.protobuf.__version__} "
      f"({api_implementation.Type()} backend)")
PYEOF
say "etcd: $(etcd --version | head -1); zookeeper.jar: $(readlink -f /usr/share/java/zookeeper.jar)"
