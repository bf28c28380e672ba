"""Kueue v0.19.2's admission and preemption in process, over the Kueue objects the kit's mapping makes:
`scheduler.KueueScheduler` serves the `api.Scheduler` contract that the real Kueue (kueue-oracle --session,
tests/support/kueue_session.py) also serves, so the two are compared decision by decision."""
