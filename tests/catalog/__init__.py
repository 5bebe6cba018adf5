"""Tests of the Spark checkpoint catalog (catalog/)."""
