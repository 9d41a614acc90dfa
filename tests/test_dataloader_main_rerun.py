"""DataLoader workers are spawned and import the main script again: a script whose module-level
code would re-run in them gets one plain-words warning at DataLoader creation, never silence."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from torchlike.utils.data._main_rerun import first_rerun_line

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _first(tmp_path, source):
    p = tmp_path / "script.py"
    p.write_text(textwrap.dedent(source))
    return first_rerun_line(str(p))


def test_definitions_and_guarded_code_do_not_rerun(tmp_path):
    assert _first(tmp_path, '''\
        """doc"""
        import torch
        from torch import nn
        N = 10
        Linear = nn.Linear
        def f(): print("x")
        class D: pass
        if __name__ == "__main__":
            print(f())
        ''') is None


def test_module_level_work_is_found(tmp_path):
    assert _first(tmp_path, '''\
        import torch
        ds = torch.arange(4)
        print(ds)
        ''') == (2, "ds = torch.arange(4)")
    assert _first(tmp_path, "import torch\nfor i in range(2):\n    pass\n") == \
        (2, "for i in range(2):")


SCRIPT = """\
import warnings
import torchlike as torch
from torchlike.utils.data import DataLoader
warnings.simplefilter("always")
data = list(range(4))
DataLoader(data, num_workers=2)
DataLoader(data, num_workers=2)                                 # once per script
DataLoader(data, num_workers=0)
print("done")
"""


def test_warning_once_at_creation(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout == "done\n", r.stderr
    assert r.stderr.count("UserWarning") == 1
    assert ("UserWarning: DataLoader workers start as fresh processes ('spawn': JAX cannot be "
            f"forked safely), and each one imports {tmp_path / 'train.py'} again: its module-level "
            "code outside "
            "`if __name__ == \"__main__\":` runs once more in every worker (from line 4: "
            "'warnings.simplefilter(\"always\")'). Move that code under `if __name__ == \"__main__\":` to "
            "run it once, or use num_workers=0.") in r.stderr
