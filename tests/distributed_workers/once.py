"""Run an expensive fixture body once per test session, even under pytest-xdist (the workers
share a directory and a file lock; the first computes, the others read its JSON)."""
import fcntl
import json
import os


def once(tmp_path_factory, name, compute):
    """``compute(directory) -> JSON-able`` run once per session; its result for every worker."""
    base = tmp_path_factory.getbasetemp()
    uid = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    root = base.parent if uid else base          # the parent is shared by xdist's workers
    tag = f"{name}-{uid or 'single'}"
    done = root / f"{tag}.json"
    with open(root / f"{tag}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return json.loads(done.read_text())
        work = root / tag
        work.mkdir(exist_ok=True)
        res = compute(work)
        done.write_text(json.dumps(res))
        return res
