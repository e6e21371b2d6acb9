"""The operator's start-up line says where state lives and whether a restart keeps it."""

from __future__ import annotations

import os

from madqa.storage import state_line

MOUNTS = "overlay / overlay rw 0 0\ntmpfs /tmp tmpfs rw 0 0\n/dev/sdb /data ext4 rw 0 0\n"


def test_state_under_data_is_said_to_persist(tmp_path):
    data = tmp_path / "data"
    (data / "madqa").mkdir(parents=True)
    line = state_line(data / "madqa", data=data, mounts=MOUNTS)
    assert "kept across restarts" in line and str(data / "madqa") in line


def test_state_in_the_container_or_in_memory_is_said_to_be_lost(tmp_path):
    missing = tmp_path / "no-data"
    assert "in memory: lost at every restart" in state_line(tmp_path, data=missing,
                                                             mounts=f"tmpfs {tmp_path} tmpfs rw 0 0\n")
    assert "the container's own filesystem" in state_line(tmp_path, data=missing, mounts="overlay / overlay rw 0 0\n")


def test_a_data_folder_the_app_cannot_write_is_a_warning(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    real = os.access
    # a root-owned /data seen by uid 1000 (the tests may run as root, who may write anywhere)
    monkeypatch.setattr("madqa.storage.os.access", lambda path, mode: False if path == data else real(path, mode))
    line = state_line(tmp_path / "home", data=data, mounts=MOUNTS)
    assert "WARNING" in line and "not writable" in line and "set MADQA_HOME" in line
