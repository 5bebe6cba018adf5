"""High availability: an active and standby namenodes sharing a quorum journal in etcd.

| module | what |
|---|---|
| ``state.py`` | HAState: active, standby, transitioning, and what each answers an op (StandbyException or RetriableException, chosen for Hadoop's failover client) |
| ``quorum_journal.py`` | the journal in etcd: key layout, batches as guarded transactions (the fencing), reading them back, purging after a checkpoint |
| ``election.py`` | the leader key on an etcd lease; its create revision is the epoch |
| ``checkpointer.py`` | the standby's checkpoints: roll on the active, save its own tree at the roll, upload the image |
| ``controller.py`` | HAController: follow the journal as a standby, campaign, take over, lead, step down |

Without ``dfs.nameservices`` none of this runs: one namenode, its local journal.
"""
