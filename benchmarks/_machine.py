"""One-line description of the machine a benchmark ran on, for benchmarks/RESULTS.md."""

import os
import platform
from pathlib import Path


def describe_machine() -> str:
    """CPU model, usable cores, memory and Python version."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kilobytes = int(meminfo.read_text().split()[1])
        memory = f", {kilobytes / 2**20:.0f} GiB RAM"
    return f"{cpu}, {cores} cores{memory}, {platform.system()}, Python {platform.python_version()}"
