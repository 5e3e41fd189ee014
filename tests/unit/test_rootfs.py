"""The base image's root filesystem: one package list and config with the image script, a cache
that never serves a half-built or foreign tree, and sessions that run on it (or say they do not)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from envpipeline.errors import SandboxError
from envpipeline.models.bundle import TaskConfig
from envpipeline.sandbox import rootfs
from envpipeline.sandbox.base import BASE_IMAGE, Limits
from envpipeline.sandbox.rootfs import BASE_IMAGE_CONFIG, ImageConfig, RootFilesystem, load
from envpipeline.terminal.bundle import dump_task_config, read_bundle, write_files
from envpipeline.terminal.families.base import STANDARD_DOCKERFILE

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build-base-image.sh"


def test_the_image_script_reads_the_same_package_list() -> None:
    lines = SCRIPT.read_text().splitlines()
    setup = [line for line in lines if line.startswith(("SCRIPT=", "PACKAGE_LIST=", "mapfile -t PACKAGES"))]
    assert len(setup) == 3 and "PACKAGES=(" not in SCRIPT.read_text(), "the list must live in one file"
    # the lines as the script runs them, with the script's own path where it names itself
    setup = [line.replace("${BASH_SOURCE[0]}", str(SCRIPT)) for line in setup]
    shell = "\n".join([*setup, 'printf "%s\\n" "${PACKAGES[@]}"'])
    listed = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, check=True).stdout.split()
    assert listed == rootfs.base_packages()
    assert {"python3", "python3-pytest", "bash"} <= set(listed)
    argv = rootfs.mmdebstrap_argv(Path("/target"), "http://mirror")
    assert f"--include={','.join(listed)}" in argv and argv[-3:] == ["bookworm", "/target", "http://mirror"]


def test_declared_config_matches_the_image_script() -> None:
    text = SCRIPT.read_text()
    env = dict(re.findall(r"--change 'ENV (\w+)=([^']*)'", text))
    workdir = re.findall(r"--change 'WORKDIR ([^']*)'", text)
    assert env == BASE_IMAGE_CONFIG.env and workdir == [BASE_IMAGE_CONFIG.workdir]


def staged(root: Path, marker: str) -> Path:
    staging = root / f".staging-{marker}"
    (staging / "fs" / "usr" / "bin").mkdir(parents=True)
    (staging / "fs" / "marker").write_text(marker)
    return staging


def test_a_finished_tree_is_renamed_into_place_and_the_first_builder_wins(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("trees are owned by the user that built them; the sandbox needs root anyway")
    final = tmp_path / "docker-abc"
    config = BASE_IMAGE_CONFIG.model_copy(update={"image_id": "sha256:abc", "source": "docker-export"})
    first = rootfs._finish(staged(tmp_path, "first"), final, config)
    second = rootfs._finish(staged(tmp_path, "second"), final, config)
    assert first == second and (first.tree / "marker").read_text() == "first"
    assert all((first.tree / name).is_dir() for name in rootfs.MOUNTPOINTS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docker-abc"], "a staging folder was left behind"
    assert load(final) == RootFilesystem(folder=final, config=config)


def test_incomplete_or_writable_trees_are_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    half = tmp_path / "half"
    (half / "fs").mkdir(parents=True)
    assert load(half) is None, "a tree without image.json is unfinished"
    (half / "image.json").write_text(BASE_IMAGE_CONFIG.model_dump_json())
    os.chmod(half, 0o755)
    os.chmod(half / "fs", 0o755)
    assert load(half) is not None
    os.chmod(half / "fs", 0o777)
    assert load(half) is None, "a tree others may write could swap the verifier's python3"
    (half / "image.json").write_text('{"image": "x", "extra": 1}')
    os.chmod(half / "fs", 0o755)
    assert load(half) is None
    monkeypatch.setenv(rootfs.ROOTFS_VAR, str(half))
    with pytest.raises(SandboxError, match="not a root filesystem"):
        rootfs.find_rootfs()
    monkeypatch.setenv(rootfs.ROOTFS_VAR, "host")
    assert rootfs.find_rootfs() is None


def test_image_config_is_strict() -> None:
    with pytest.raises(ValueError):
        ImageConfig.model_validate({**BASE_IMAGE_CONFIG.model_dump(), "user": "root"})


def test_host_notice_names_what_the_host_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rootfs, "host_gaps", lambda: ("pytest",))
    notice = rootfs.host_notice()
    assert notice.startswith("host /usr stands in for the image") and ": pytest missing" in notice
    assert "make base-rootfs" in notice


def bundle_at(root: Path, dockerfile: str) -> Path:
    write_files(
        root,
        {
            "task.toml": dump_task_config(TaskConfig()),
            "instruction.md": "x\n",
            "environment/Dockerfile": dockerfile,
            "environment/app/data.txt": "hello\n",
        },
    )
    return root


@pytest.mark.parametrize("isolation", ["bwrap", "unshare"])
def test_sessions_run_on_the_tree_with_the_image_environment(tmp_path: Path, isolation: str) -> None:
    from envpipeline.sandbox.isolation import isolation_works
    from envpipeline.sandbox.local import LocalSandbox

    if not isolation_works(isolation):
        pytest.skip(f"{isolation} does not isolate here")
    sandbox = LocalSandbox(isolation=isolation)
    tree = sandbox.image_tree()
    if tree is None:
        pytest.skip("no base root filesystem here (no Docker image, no mmdebstrap tree)")
    dockerfile = (
        f"FROM {BASE_IMAGE_CONFIG.image}\nCOPY app/ /app/\nRUN pwd > /app/run-dir\n"
        'ENV PATH="/app/bin:${PATH}" COPY_OF_LANG=${LANG}\n'
    )
    bundle = read_bundle(bundle_at(tmp_path / "b", dockerfile))
    try:
        with sandbox.open(bundle, Limits()) as session:
            result = session.exec(
                "cat /app/run-dir; echo $PATH; echo $COPY_OF_LANG; cat /etc/debian_version", timeout_sec=20
            )
            assert session.notices == ()
    finally:
        sandbox.close()
    lines = result.stdout.splitlines()
    assert lines[0] == tree.config.workdir == "/app", result.stderr
    assert lines[1] == "/app/bin:" + tree.config.env["PATH"]
    assert lines[2] == tree.config.env["LANG"]
    assert lines[3] == (tree.tree / "etc" / "debian_version").read_text().strip()


def test_host_fallback_session_says_so(tmp_path: Path) -> None:
    from envpipeline.sandbox.local import LocalSandbox

    if not LocalSandbox.available():
        pytest.skip("no bubblewrap or namespaces here")
    sandbox = LocalSandbox(rootfs="host")
    bundle = read_bundle(bundle_at(tmp_path / "b", STANDARD_DOCKERFILE + 'ENV PATH="/app/bin:${PATH}"\n'))
    try:
        with sandbox.open(bundle, Limits()) as session:
            result = session.exec("command -v bash", timeout_sec=20)
            notices = session.notices
    finally:
        sandbox.close()
    assert result.exit_code == 0, "PATH lost /usr/bin: ${PATH} did not start from the image's value"
    assert len(notices) == 1 and notices[0].startswith("host /usr stands in for the image")


@pytest.mark.docker
def test_docker_export_caches_the_image_tree_and_a_failed_one_leaves_nothing(
    docker_sandbox, tmp_path: Path
) -> None:
    config = rootfs.docker_image_config()
    assert config is not None and config.env["PATH"].endswith("/usr/bin:/sbin:/bin")
    tree = rootfs.export_docker_image(config, tmp_path)
    assert tree.folder == rootfs.docker_folder(config, tmp_path) and load(tree.folder) == tree
    assert (tree.tree / "usr/lib/python3/dist-packages/pytest/__init__.py").is_file()
    assert (tree.tree / "bin").is_symlink() or (tree.tree / "bin" / "bash").is_file()
    assert rootfs.export_docker_image(config, tmp_path) == tree, "a cached tree is reused"
    missing = config.model_copy(update={"image": "envpipeline/no-such-image:never", "image_id": "sha256:0"})
    with pytest.raises(SandboxError, match="docker create"):
        rootfs.export_docker_image(missing, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [tree.folder.name], "a half tree was left"


def test_a_foreign_from_is_resolved_and_named_in_the_verdict(local_sandbox, tmp_path: Path) -> None:
    from envpipeline.terminal.verify import verify_bundle

    dockerfile = "FROM python:3.13-slim-bookworm\nWORKDIR /app\nCOPY app/ /app/\n"
    root = bundle_at(tmp_path / "foreign", dockerfile)
    write_files(
        root,
        {
            "solution/solve.sh": "#!/bin/bash\necho 42 > /app/answer.txt\n",
            "tests/test.sh": "#!/bin/bash\ngrep -qx 42 /app/answer.txt && echo 1 > /logs/verifier/reward.txt"
            " || echo 0 > /logs/verifier/reward.txt\n",
        },
    )
    result = verify_bundle(root, local_sandbox, with_red_team=False)
    assert result.verdict == "verified", result.reasons
    # the image resolution maps the FROM onto the base image and lists the swap with what differs
    (swap,) = result.substitutions
    assert (swap.original, swap.replacement) == ("python:3.13-slim-bookworm", BASE_IMAGE)
    assert "3.13" in swap.reason
