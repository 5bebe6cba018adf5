"""Tests of the etcd client (client/etcd/)."""
