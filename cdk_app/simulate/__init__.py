"""What the governance will do: a deterministic discrete-event simulation of an environment's task governance
(the add-on's Kueue, fed with the kit's Kueue mapping) and of its AWS Batch queues, and the explanations built
on it (`hyperpod-kit simulate`, `hyperpod-kit explain`).

    kueue/       Kueue v0.19.2's admission and preemption, in-process, over the Kueue objects the mapping makes
                 (cdk_app.domain.kueue_mapping): the scheduling core, judged against the real Kueue scheduler
    workloads.py the workload file (jobs, their teams, shapes, submit times and runtimes), located errors
    engine.py    the timeline: submissions, completions and scheduling cycles in simulated time
    report.py    per job events, per team usage against quota, waits, utilisation (table and JSON)
    batch.py     the same for an environment's AWS Batch quota-share and fair-share queues

Pure Python: no aws_cdk, no Kubernetes client; the config model and the domain rules are the validator's.
"""
