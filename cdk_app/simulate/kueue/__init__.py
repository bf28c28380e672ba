"""Kueue v0.19.2's admission and preemption in process (KueueScheduler in scheduler.py), behind the Scheduler
contract of api.py that the real Kueue (kueue-oracle's session mode) also implements."""
