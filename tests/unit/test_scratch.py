"""Scratch folders go to a memory-backed tmpfs when there is one with room, else to the system's
temporary folder; TMPDIR keeps the system's choice."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from envpipeline import scratch
from envpipeline.scratch import _is_tmpfs, scratch_folder, scratch_root

MOUNTS = "proc /proc proc rw 0 0\ntmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n/dev/vda / ext4 rw 0 0\n"


def test_only_a_tmpfs_mount_point_counts_as_memory(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text(MOUNTS)
    assert _is_tmpfs(Path("/dev/shm"), mounts)
    assert not _is_tmpfs(Path("/"), mounts)  # ext4
    assert not _is_tmpfs(Path("/dev/shm/sub"), mounts)  # not a mount point
    assert not _is_tmpfs(Path("/dev/shm"), tmp_path / "missing")


def test_a_tmpfs_with_room_is_used_unless_tmpdir_is_set(tmp_path, monkeypatch):
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(scratch, "_is_tmpfs", lambda folder: True)
    assert scratch_root(tmp_path, min_free=1) == tmp_path
    assert scratch_root(tmp_path, min_free=1 << 60) is None  # too little room (a container's 64 MiB)
    assert scratch_root(tmp_path / "missing", min_free=1) is None
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert scratch_root(tmp_path, min_free=1) is None  # the user picked where temporary files go


def test_a_disk_folder_is_never_taken_for_memory(tmp_path, monkeypatch):
    monkeypatch.delenv("TMPDIR", raising=False)
    assert scratch_root(tmp_path, min_free=1) is None  # pytest's tmp_path is no tmpfs mount point


def test_a_scratch_folder_is_removed_when_its_block_ends(tmp_path, monkeypatch):
    monkeypatch.setattr(scratch, "scratch_root", lambda: tmp_path)
    with scratch_folder("probe-") as folder:
        assert Path(folder).parent == tmp_path and Path(folder).name.startswith("envpipeline-probe-")
        (Path(folder) / "file").write_text("x")
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(scratch_root() is None, reason="no memory-backed tmpfs with room on this machine")
def test_on_this_machine_scratch_is_in_memory():
    with scratch_folder("probe-") as folder:
        assert not Path(folder).is_relative_to(tempfile.gettempdir())


def test_a_kept_scratch_folder_is_made_under_the_root(tmp_path, monkeypatch):
    monkeypatch.setattr(scratch, "scratch_root", lambda: tmp_path)
    folder = scratch.scratch_mkdtemp("episode-")
    assert folder.is_dir() and folder.parent == tmp_path and folder.name.startswith("envpipeline-episode-")


def _dead_pid() -> int:
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_folders_of_processes_that_no_longer_run_are_swept_from_memory(tmp_path, monkeypatch):
    """A killed process's scratch folder would hold memory until the machine restarts."""
    import os

    monkeypatch.setattr(scratch, "scratch_root", lambda: tmp_path)
    dead, alive = _dead_pid(), os.getpid()
    left = tmp_path / f"envpipeline-wildawm-gate-{dead}-ab12cd34"
    left.mkdir()
    (left / "world.sqlite").write_bytes(b"x" * 1024)
    live = tmp_path / f"envpipeline-envpipeline-w0-{alive}-zz99yy88"
    live.mkdir()
    foreign = tmp_path / f"other-tool-{dead}-ab12cd34"
    foreign.mkdir()
    with scratch_folder("wildawm-gate-") as folder:
        assert Path(folder).name.startswith(f"envpipeline-wildawm-gate-{alive}-")
        assert not left.exists()
        assert live.is_dir() and foreign.is_dir()  # a running process's folder; not ours
    episode = scratch.scratch_mkdtemp("envpipeline-world-")
    assert episode.name.startswith(f"envpipeline-world-{alive}-")  # the mark once
