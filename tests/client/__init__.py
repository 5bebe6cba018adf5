"""Tests of the client stack (client/)."""
