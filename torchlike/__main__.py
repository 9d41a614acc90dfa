"""``python -m torchlike script.py [args...]``: run a PyTorch program on torchlike.

See ``torchlike/_dropin.py``.
"""
import sys

from torchlike._dropin import main

if __name__ == "__main__":
    sys.exit(main())
