"""Docker/local parity: a bundle gets the same gold-verification verdict on both backends.

The local sandbox runs on the base image's own tree (`envpipeline.sandbox.rootfs`) with the
image's ENV and WORKDIR, so what a task finds there is what its container finds. Covered: the
generated bundle of every registered task family (a sample by default, all with ``make test-full``), and
bundles that diverged while the local sandbox ran on the host's ``/usr``: a pytest-based
``test.sh`` (the host here may have no pytest at all), ``ENV PATH="/app/bin:${PATH}"`` (717 of
1,564 public Terminal-Bench 1 Dockerfiles extend PATH that way) and the image's default WORKDIR.
Each pair is verified oracle twice + nop (the red team is the family contract's business).
The Docker half is marked ``docker`` and skipped where the engine or the base image is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envpipeline.models.bundle import TaskConfig
from envpipeline.sandbox.base import Limits, Sandbox
from envpipeline.sandbox.local import LocalSandbox
from envpipeline.sandbox.rootfs import BASE_IMAGE_CONFIG, host_gaps
from envpipeline.terminal.bundle import dump_task_config, read_bundle, write_files
from envpipeline.terminal.families.base import STANDARD_DOCKERFILE, write_generated
from envpipeline.terminal.families.registry import all_families
from envpipeline.terminal.verify import VerificationResult, verify_bundle

FAMILIES = sorted(all_families())
#: The family of the default run (git from the image); the full matrix is `full_matrix` (~40 s a family cold).
SAMPLE = ("git-operations",)

#: A verifier in the Terminal-Bench style: pytest from the image, reward 1 only if the test passes.
PYTEST_TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
cd /tests
if python3 -m pytest -q -p no:cacheprovider test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
PYTEST_TEST = 'def test_answer():\n    assert open("/app/answer.txt").read().strip() == "42"\n'

#: A tool on a PATH that the Dockerfile extends; test.sh needs it and bash/python3 from /usr/bin.
PATH_DOCKERFILE = STANDARD_DOCKERFILE + 'ENV PATH="/app/bin:${PATH}"\nRUN pwd > /app/build-dir.txt\n'
PATH_TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
if [ "$(greet)" = hello ] && [ "$(cat /app/answer.txt)" = 42 ] && python3 -c 'print()' >/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""

#: No WORKDIR and a relative write: RUN starts in the image's WORKDIR (/app), as in Docker.
WORKDIR_DOCKERFILE = f"FROM {BASE_IMAGE_CONFIG.image}\nCOPY app/ /app/\nRUN pwd > /app/build-dir.txt\n"
WORKDIR_TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/build-dir.txt)" = /app ] && [ "$(cat /app/answer.txt)" = 42 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""

SOLVE_SH = "#!/bin/bash\necho 42 > /app/answer.txt\n"


def divergent_bundle(root: Path, kind: str) -> Path:
    """A bundle of one kind that verified in Docker but not locally on the host's /usr."""
    dockerfile, test_sh, extra = {
        "pytest": (STANDARD_DOCKERFILE, PYTEST_TEST_SH, {"tests/test_outputs.py": PYTEST_TEST}),
        "env-path": (PATH_DOCKERFILE, PATH_TEST_SH, {"environment/app/bin/greet": "#!/bin/sh\necho hello\n"}),
        "image-workdir": (WORKDIR_DOCKERFILE, WORKDIR_TEST_SH, {}),
    }[kind]
    files: dict[str, str | bytes] = {
        "task.toml": dump_task_config(TaskConfig()),
        "instruction.md": "Write 42 to /app/answer.txt.\n",
        "environment/Dockerfile": dockerfile,
        "environment/app/readme.txt": "the answer goes in /app/answer.txt\n",
        "solution/solve.sh": SOLVE_SH,
        "tests/test.sh": test_sh,
        **extra,
    }
    write_files(root, files)
    for name in ("solution/solve.sh", "tests/test.sh", "environment/app/bin/greet"):
        if (root / name).exists():
            (root / name).chmod(0o755)
    return root


def family_bundle(root: Path, name: str) -> Path:
    family = all_families()[name]
    return write_generated(family.generate(1, family.knobs_for("medium"), "medium"), root / name)


def outcome(result: VerificationResult) -> tuple[str, list[float | None], float | None]:
    return result.verdict, result.oracle_rewards, result.nop_reward


def assert_same_verdict(path: Path, local: Sandbox, docker: Sandbox) -> None:
    on_local = verify_bundle(path, local, with_red_team=False)
    on_docker = verify_bundle(path, docker, with_red_team=False)
    assert outcome(on_docker) == ("verified", [1.0, 1.0], 0.0), on_docker.reasons
    assert outcome(on_local) == outcome(on_docker), (on_local.reasons, on_local.tails())


@pytest.mark.parametrize("kind", ["pytest", "env-path", "image-workdir"])
def test_bundles_that_diverged_verify_on_the_local_sandbox(local_sandbox, tmp_path: Path, kind: str) -> None:
    result = verify_bundle(divergent_bundle(tmp_path / kind, kind), local_sandbox, with_red_team=False)
    assert outcome(result) == ("verified", [1.0, 1.0], 0.0), (result.reasons, result.tails())
    assert local_sandbox.image_tree() is not None and result.reasons == []


def test_pytest_comes_from_the_image_tree(local_sandbox, tmp_path: Path) -> None:
    tree = local_sandbox.image_tree()
    assert tree is not None, "no base root filesystem: run `make base-rootfs`"
    assert (tree.tree / "usr/lib/python3/dist-packages/pytest/__init__.py").is_file()
    bundle = read_bundle(divergent_bundle(tmp_path / "probe", "pytest"))
    with local_sandbox.open(bundle, Limits()) as session:
        probe = session.exec('python3 -c "import pytest; print(pytest.__file__)"', timeout_sec=30)
        assert session.notices == ()
    assert probe.stdout.strip() == "/usr/lib/python3/dist-packages/pytest/__init__.py", probe.stderr


def test_host_fallback_says_why_a_pytest_task_fails(local_sandbox, tmp_path: Path) -> None:
    if "pytest" not in host_gaps():
        pytest.skip("the host's python3 has pytest: the fallback would pass this task")
    host = LocalSandbox(rootfs="host")
    try:
        result = verify_bundle(divergent_bundle(tmp_path / "pytest", "pytest"), host, with_red_team=False)
    finally:
        host.close()
    assert result.verdict == "oracle_failed", result.reasons
    assert any("host /usr stands in for the image" in r and "pytest" in r for r in result.reasons), (
        result.reasons
    )


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["pytest", "env-path", "image-workdir"])
def test_divergent_bundles_get_the_same_verdict_on_both(
    local_sandbox, docker_sandbox, tmp_path: Path, kind: str
) -> None:
    assert_same_verdict(divergent_bundle(tmp_path / kind, kind), local_sandbox, docker_sandbox)


@pytest.mark.docker
@pytest.mark.parametrize("name", SAMPLE)
def test_sampled_families_get_the_same_verdict_on_both(
    local_sandbox, docker_sandbox, tmp_path: Path, name: str
) -> None:
    assert_same_verdict(family_bundle(tmp_path, name), local_sandbox, docker_sandbox)


@pytest.mark.full_matrix
@pytest.mark.docker
@pytest.mark.parametrize("name", [n for n in FAMILIES if n not in SAMPLE])
def test_every_family_gets_the_same_verdict_on_both(
    local_sandbox, docker_sandbox, tmp_path: Path, name: str
) -> None:
    assert_same_verdict(family_bundle(tmp_path, name), local_sandbox, docker_sandbox)
