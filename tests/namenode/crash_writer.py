"""Child process for the crash tests: writes under concurrent load, prints each acknowledged op.

Usage: python -m tests.namenode.crash_writer ROUND THREADS NAME_DIR [NAME_DIR ...]

Each thread t repeats: mkdirs /r{round}/t{t}/d{i}; create .../f; rename .../f -> .../g; and
after each one is durable (``fs.durable``) prints ``ACK <kind> <path>``. A printed line is
therefore an op the store acknowledged; the parent kills this process with SIGKILL at a random
moment.
"""

import sys
import threading

from nnlite.namenode.fsnamesystem import FSNamesystem


def main() -> None:
    round_no, threads, dirs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    fs = FSNamesystem.open(dirs)
    user = fs.identity.superuser
    out = threading.Lock()

    def ack(kind: str, path: str) -> None:
        with out:
            sys.stdout.write(f"ACK {kind} {path}\n")
            sys.stdout.flush()

    def work(t: int) -> None:
        i = 0
        while True:
            base = f"/r{round_no}/t{t}/d{i}"
            fs.durable(fs.mkdirs(base, 0o755, user))
            ack("dir", base)
            fs.durable(fs.create(base + "/f", user))
            ack("file", base + "/f")
            fs.durable(fs.rename(base + "/f", base + "/g", False, user))
            ack("renamed", base + "/g")
            i += 1

    print("READY", flush=True)
    for t in range(threads):
        threading.Thread(target=work, args=(t,), daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
