"""High availability: an active and standby namenodes sharing a quorum journal in etcd.

* ``state.py``: HAState: active, standby, transitioning, and what each answers an op
  (StandbyException or RetriableException, chosen for Hadoop's failover client)
* ``quorum_journal.py``: the journal in etcd: key layout, batches as guarded transactions (the
  fencing), reading them back, purging after a checkpoint
* ``election.py``: the leader key on an etcd lease; its create revision is the epoch
* ``checkpointer.py``: the standby's checkpoints: roll on the active, save its own tree at the roll,
  upload the image
* ``tailer.py``: EditLogTailer: a standby applies the committed journal, its edits first made a
  prefix of it (reconcile); its lag
* ``health.py``: HealthMonitor: the pulse of the peer active (a refused port opens the election),
  and the health a standby reports: cannot follow (then it starts again from the active's image), or
  lags too long
* ``positions.py``: StandbyPositions: each standby's position in etcd (txid, lag, datanode, health)
  and the active's view of them
* ``takeover.py``: Takeover (ActiveStandbyElector and ZKFC's failover): campaign, take over, lead,
  step down, the administrator's transitions and the graceful failover's cede
* ``controller.py``: HAController: the loop that composes them, one namenode's part in the set

Without ``dfs.nameservices`` none of this runs: one namenode, its local journal.
"""
