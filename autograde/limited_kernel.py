"""A Jupyter kernelspec whose IPython kernels run under an address-space limit.

Grading puts the folder written by :func:`install_kernelspec` first on
JUPYTER_PATH, so a student's notebook that allocates too much gets a
MemoryError in the cell that did it instead of exhausting the machine.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

# Run by path from the kernelspec folder, so the kernel's sys.path gains only that folder.
LAUNCHER = '''"""Start an IPython kernel limited to LIMIT_MIB MiB of address space (written by autograde)."""
import resource
import sys

limit = int(sys.argv.pop(1)) * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from ipykernel import kernelapp

kernelapp.launch_new_instance()
'''


def install_kernelspec(folder: Path, memory_mib: int) -> Path:
    """Write a 'python3' kernelspec under ``folder/kernels`` limited to `memory_mib` MiB; returns `folder`."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    launcher = spec / "launch_limited_kernel.py"
    launcher.write_text(LAUNCHER)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, str(launcher), str(memory_mib), "-f", "{connection_file}"],
        "display_name": f"Python 3 (graded, {memory_mib} MiB)",
        "language": "python",
    }))
    return folder
