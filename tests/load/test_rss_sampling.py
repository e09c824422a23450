"""The load harness's memory sampling survives a replica that was just killed."""

from __future__ import annotations

import asyncio
import time

from loadtest import sample_rss


def test_a_process_gone_from_proc_counts_as_holding_nothing():
    """Docker reports a killed replica's old pid until its restart, and that pid has no /proc
    entry: the compose smoke failed on round(nan) when a sample fell in that window."""
    gone = 2**22 + 12345  # above the kernel's largest pid: never a live process
    peak, timeline = [0.0], []
    asyncio.run(sample_rss(lambda: [gone, None], time.monotonic() + 0.05, peak, timeline))
    assert timeline == [0] and peak == [0.0]
