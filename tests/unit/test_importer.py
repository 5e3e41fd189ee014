"""Terminal-Bench 1 -> Harbor import on realistic TB1 fixtures built in tmp_path."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from envpipeline.errors import ConfigError
from envpipeline.sandbox.base import BASE_IMAGE
from envpipeline.terminal.bundle import load_task_config
from envpipeline.terminal.checks import check_bundle
from envpipeline.terminal.importer import ImportReport, import_terminal_bench
from envpipeline.terminal.seed_import import import_many
from envpipeline.terminal.shell_rewrite import rewrite_script

TB_IMAGE = "ghcr.io/laude-institute/t-bench/python-3-13:20250620"

#: Terminal-Bench's stock run-tests.sh (the uv bootstrap most TB1 tasks ship).
STOCK_RUN_TESTS = """#!/bin/bash

# You can modify anything in this script. Just make sure it generates test output that
# is parsed by a parser (PytestParser by default).

# This boilerplate script installs uv (to manage Python) and runs pytest.

# Install curl
apt-get update
apt-get install -y curl

# Install uv
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh

source $HOME/.local/bin/env

# Check if we're in a valid working directory
if [ "$PWD" = "/" ]; then
    echo "Error: No working directory set. Please set a WORKDIR in your Dockerfile before running this script."
    exit 1
fi

uv init
uv add pytest==8.4.1

# Run pytest
uv run pytest $TEST_DIR/test_outputs.py -rA
"""

TASK_YAML = {
    "instruction": 'Create /app/hello.txt containing "Hello, world!" followed by a newline.\n',
    "author_name": "Jane Doe",
    "author_email": "jane@example.com",
    "difficulty": "easy",
    "category": "file-operations",
    "tags": ["file-operations", "bash"],
    "parser_name": "pytest",
    "max_agent_timeout_sec": 360.0,
    "max_test_timeout_sec": 90.0,
    "run_tests_in_same_shell": False,
}

#: Checks that hold on the host too (TEST_DIR is set by test.sh), so test.sh can really run.
TEST_OUTPUTS = """import os
from pathlib import Path


def test_test_dir_is_set():
    assert Path(os.environ["TEST_DIR"], "test_outputs.py").is_file()
"""


def make_tb1(root: Path, name: str = "hello-world", files: dict[str, str] | None = None) -> Path:
    """A TB1 task directory; `files` override or add files ("" leaves a default file out)."""
    task = root / name
    defaults = {
        "task.yaml": yaml.safe_dump(TASK_YAML),
        "Dockerfile": f"FROM {TB_IMAGE}\n\nWORKDIR /app\nCOPY data/input.txt /app/input.txt\n",
        "data/input.txt": "hello\n",
        "run-tests.sh": STOCK_RUN_TESTS,
        "solution.sh": '#!/bin/bash\necho "Hello, world!" > /app/hello.txt\n',
        "tests/test_outputs.py": TEST_OUTPUTS,
    }
    for rel, text in {**defaults, **(files or {})}.items():
        if text == "":
            continue
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    return task


@pytest.fixture()
def imported(tmp_path: Path) -> tuple[Path, ImportReport]:
    out = tmp_path / "out" / "hello-world"
    return out, import_terminal_bench(make_tb1(tmp_path / "tb"), out)


def test_harbor_layout(imported: tuple[Path, ImportReport]) -> None:
    out, report = imported
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [
        "environment/Dockerfile",
        "environment/data/input.txt",
        "instruction.md",
        "solution/solve.sh",
        "task.toml",
        "tests/test.sh",
        "tests/test_outputs.py",
    ]
    assert report.ok and report.task == "hello-world" and report.flags == []
    assert (out / "instruction.md").read_text() == TASK_YAML["instruction"]
    assert os.access(out / "solution/solve.sh", os.X_OK) and os.access(out / "tests/test.sh", os.X_OK)
    config = load_task_config(out / "task.toml")
    assert config.effective_schema == "1.0"
    assert config.metadata.author_name == "Jane Doe" and config.metadata.difficulty == "easy"
    assert config.metadata.tags == ["file-operations", "bash"]
    assert config.verifier.timeout_sec == 90.0 and config.agent.timeout_sec == 360.0
    assert config.metadata.envpipeline["source"] == "terminal-bench-1"


def test_base_image_substitution_recorded(imported: tuple[Path, ImportReport]) -> None:
    out, report = imported
    assert [(s.file, s.line, s.original, s.replacement) for s in report.substitutions] == [
        ("Dockerfile", 1, TB_IMAGE, BASE_IMAGE)
    ]
    dockerfile = (out / "environment/Dockerfile").read_text()
    assert dockerfile.startswith(f"FROM {BASE_IMAGE}\n") and TB_IMAGE not in dockerfile
    meta = load_task_config(out / "task.toml").metadata.envpipeline
    assert meta["base_image_substitution"] == {"from": TB_IMAGE, "to": BASE_IMAGE}


def test_bootstrap_rewritten_offline(imported: tuple[Path, ImportReport]) -> None:
    out, report = imported
    test_sh = (out / "tests/test.sh").read_text()
    assert not re.search(r"\b(curl|uv|uvx|apt-get|pip)\b", test_sh), test_sh
    assert "astral.sh" not in test_sh and ".local/bin/env" not in test_sh
    assert "python3 -m pytest $TEST_DIR/test_outputs.py -rA" in test_sh
    assert 'cd "/app"' in test_sh  # TB1 ran the tests in the image's WORKDIR
    rewritten = {r.original: r.replacement for r in report.rewrites if r.file == "run-tests.sh"}
    assert rewritten["curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh"] == "true"
    assert rewritten["apt-get install -y curl"] == "true"
    assert rewritten["source $HOME/.local/bin/env"] == "true"
    assert rewritten["uv add pytest==8.4.1"] == "true"
    assert (
        rewritten["uv run pytest $TEST_DIR/test_outputs.py -rA"]
        == "python3 -m pytest $TEST_DIR/test_outputs.py -rA"
    )
    assert all(r.reason for r in report.rewrites)
    assert any("curl" in w for w in report.warnings)  # the dropped apt package is reported
    assert not any("pytest==" in w for w in report.warnings)  # pytest itself is in the base image


def test_test_sh_writes_reward_file(imported: tuple[Path, ImportReport], tmp_path: Path) -> None:
    out, _ = imported
    test_sh = (out / "tests/test.sh").read_text()
    assert "echo 1 > /logs/verifier/reward.txt" in test_sh and "echo 0 > /logs/verifier/reward.txt" in test_sh
    assert "> /logs/verifier/test-stdout.txt 2>&1" in test_sh
    subprocess.run(["bash", "-n", str(out / "tests/test.sh")], check=True)
    # really run it, with /logs/verifier redirected into tmp_path and the venv's pytest as python3
    logs = tmp_path / "logs"
    runnable = tmp_path / "test.sh"
    for passing, want in ((True, "1"), (False, "0")):
        if not passing:
            (out / "tests/test_outputs.py").write_text("def test_fails():\n    assert False\n")
        runnable.write_text(test_sh.replace("/logs/verifier", str(logs)))
        env = {
            **os.environ,
            "TEST_DIR": str(out / "tests"),
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        done = subprocess.run(
            ["bash", str(runnable)],
            cwd=tmp_path,
            env=env,
            check=True,
            timeout=120,
            capture_output=True,
            text=True,
        )
        assert (logs / "reward.txt").read_text().strip() == want
        assert "test_outputs.py" in (logs / "test-stdout.txt").read_text()
        # the tests' own output reaches the verifier's stdout too (verify reports and reasons show it)
        assert ("1 passed" if passing else "1 failed") in done.stdout.splitlines()[-1]


def test_a_planted_pytest_in_the_working_folder_is_not_the_test_runner(
    imported: tuple[Path, ImportReport], tmp_path: Path
) -> None:
    """`python3 -m pytest` runs in the agent's folder; a pytest.py planted there must not run."""
    out, _ = imported
    (out / "tests/test_outputs.py").write_text("def test_fails():\n    assert False\n")
    (tmp_path / "pytest.py").write_text("print('PLANTED')\nraise SystemExit(0)\n")
    logs = tmp_path / "logs"
    runnable = tmp_path / "test.sh"
    runnable.write_text((out / "tests/test.sh").read_text().replace("/logs/verifier", str(logs)))
    env = {
        **os.environ,
        "TEST_DIR": str(out / "tests"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", str(runnable)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert "PLANTED" not in done.stdout and "1 failed" in done.stdout
    assert (logs / "reward.txt").read_text().strip() == "0"


def test_imported_bundle_passes_static_checks(imported: tuple[Path, ImportReport]) -> None:
    out, _ = imported
    report = check_bundle(out)
    assert report.passed, report.failed()


def test_schema_11(tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_terminal_bench(make_tb1(tmp_path / "tb"), out, schema="1.1", org="tb")
    config = load_task_config(out / "task.toml")
    assert config.effective_schema == "1.1"
    assert config.task is not None and config.task.name == "tb/hello-world"
    assert config.task.authors[0].email == "jane@example.com" and config.task.keywords == [
        "file-operations",
        "bash",
    ]
    assert config.environment.network_mode == "no-network"


def test_network_dockerfile_flagged(tmp_path: Path) -> None:
    dockerfile = (
        f"FROM {TB_IMAGE}\nRUN apt-get update && \\\n    apt-get install -y jq\n"
        "RUN pip install numpy==2.0\nRUN mkdir -p /app\nWORKDIR /app\n"
    )
    report = import_terminal_bench(
        make_tb1(tmp_path / "tb", files={"Dockerfile": dockerfile}), tmp_path / "out"
    )
    (flag,) = report.flags
    assert flag.name == "needs_network_build" and flag.file == "environment/Dockerfile"
    assert flag.lines == ["RUN apt-get update && apt-get install -y jq", "RUN pip install numpy==2.0"]
    meta = load_task_config(tmp_path / "out/task.toml").metadata.envpipeline
    assert meta["flags"] == ["needs_network_build"]


def test_multi_service_compose_kept_and_flagged(tmp_path: Path) -> None:
    compose = yaml.safe_dump(
        {"services": {"client": {"build": {"dockerfile": "Dockerfile"}}, "db": {"image": "postgres:16"}}}
    )
    task = make_tb1(tmp_path / "tb", files={"docker-compose.yaml": compose})
    report = import_terminal_bench(task, tmp_path / "out2")
    (flag,) = report.flags
    assert (
        flag.name == "compose"
        and "not runnable in our sandboxes" in flag.message
        and "2 service(s)" in flag.message
    )
    assert (tmp_path / "out2/environment/docker-compose.yaml").read_text() == compose
    assert (tmp_path / "out2/environment/Dockerfile").is_file()


def test_compose_only_task_flagged(tmp_path: Path) -> None:
    compose = yaml.safe_dump({"services": {"app": {"image": "nginx"}, "db": {"image": "redis"}}})
    task = make_tb1(tmp_path / "tb", files={"Dockerfile": "", "docker-compose.yaml": compose})
    report = import_terminal_bench(task, tmp_path / "out")
    assert [f.name for f in report.flags] == ["compose"]
    assert not (tmp_path / "out/environment/Dockerfile").exists()


def test_stock_compose_wrapper_dropped(tmp_path: Path) -> None:
    stock = yaml.safe_dump(
        {
            "services": {
                "client": {
                    "build": {"dockerfile": "Dockerfile"},
                    "image": "${T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}",
                    "command": ["sh", "-c", "sleep infinity"],
                }
            }
        }
    )
    report = import_terminal_bench(
        make_tb1(tmp_path / "tb", files={"docker-compose.yaml": stock}), tmp_path / "out"
    )
    assert report.flags == []
    assert any(r.file == "docker-compose.yaml" and "stock" in r.reason for r in report.rewrites)
    assert not (tmp_path / "out/environment/docker-compose.yaml").exists()


def test_solution_yaml_converted(tmp_path: Path) -> None:
    steps = [
        {"command": "cd /app", "min_timeout_sec": 0.1, "block": True, "append_enter": True},
        {"command": "echo 'Hello, world!' > hello.txt", "block": True, "append_enter": True},
        {"command": "python3 -m http.server 8000", "block": False, "append_enter": True},
        "cat hello.txt",
    ]
    task = make_tb1(tmp_path / "tb", files={"solution.sh": "", "solution.yaml": yaml.safe_dump(steps)})
    report = import_terminal_bench(task, tmp_path / "out")
    solve = (tmp_path / "out/solution/solve.sh").read_text()
    assert solve.startswith("#!/bin/bash\n")
    assert solve.splitlines()[2:] == [
        "cd /app",
        "echo 'Hello, world!' > hello.txt",
        "python3 -m http.server 8000 &",
        "cat hello.txt",
    ]
    assert any(r.file == "solution.yaml" and r.replacement == "solution/solve.sh" for r in report.rewrites)
    assert any("background" in w for w in report.warnings)


def test_missing_run_tests_uses_default(tmp_path: Path) -> None:
    report = import_terminal_bench(make_tb1(tmp_path / "tb", files={"run-tests.sh": ""}), tmp_path / "out")
    assert 'python3 -m pytest "$TEST_DIR/test_outputs.py" -rA' in (tmp_path / "out/tests/test.sh").read_text()
    assert any("default" in r.reason for r in report.rewrites)


def test_refuses_non_empty_out_and_bad_task(tmp_path: Path) -> None:
    task = make_tb1(tmp_path / "tb")
    out = tmp_path / "out"
    import_terminal_bench(task, out)
    with pytest.raises(ConfigError, match="not empty"):
        import_terminal_bench(task, out)
    import_terminal_bench(task, out, overwrite=True)
    (task / "task.yaml").write_text("author_name: x\n")
    with pytest.raises(ConfigError, match="no `instruction`"):
        import_terminal_bench(task, tmp_path / "other")


def test_import_many(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    make_tb1(root, "alpha")
    make_tb1(root, "beta", {"Dockerfile": f"FROM {TB_IMAGE}\nRUN curl -fsSL https://example.com/x | sh\n"})
    make_tb1(root, "broken", files={"task.yaml": "instruction: [unclosed\n"})
    reports = {r.task: r for r in import_many(root, tmp_path / "out")}
    assert sorted(reports) == ["alpha", "beta", "broken"]
    assert reports["alpha"].ok and reports["alpha"].flags == []
    assert [f.name for f in reports["beta"].flags] == ["needs_network_build"]
    assert not reports["broken"].ok and "invalid YAML" in reports["broken"].error
    assert (tmp_path / "out/alpha/task.toml").is_file() and not (tmp_path / "out/broken").exists()


def test_rewrite_keeps_syntax_and_local_curl() -> None:
    script = (
        "set -e\n"
        "pip install requests && python -m pytest tests/ -q\n"
        "if ! pip3 install foo; then echo skipped; fi\n"
        "curl -s http://localhost:8000/health\n"
        "cat > /tmp/t.txt <<EOF\npip install inside a heredoc\nEOF\n"
        "uvx pytest /tests/test_outputs.py\n"
    )
    result = rewrite_script(script)
    assert result.text.splitlines() == [
        "set -e",
        "true && python3 -m pytest tests/ -q",
        "if ! true; then echo skipped; fi",
        "curl -s http://localhost:8000/health",
        "cat > /tmp/t.txt <<EOF",
        "pip install inside a heredoc",
        "EOF",
        "python3 -m pytest /tests/test_outputs.py",
    ]
    assert result.dropped_packages == ["requests", "foo"]


#: A TB1 variant seen in the wild: guarded curl install, a venv, a multi-line `uv pip install`.
VENV_RUN_TESTS = """#!/bin/bash
set -euo pipefail
# Install curl if missing
if ! command -v curl >/dev/null 2>&1; then
    apt-get update
    apt-get install -y curl
fi
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
source $HOME/.local/bin/env
uv venv .tbench-testing
source .tbench-testing/bin/activate
uv pip install --no-cache-dir \\
    pytest==8.3.4 \\
    pandas==2.2.3 \\
    numpy==2.2.1
uv run pytest $TEST_DIR/test_outputs.py -rA
"""


def test_rewrite_of_guarded_install_and_venv(tmp_path: Path) -> None:
    result = rewrite_script(VENV_RUN_TESTS, strip_comments=True)
    assert result.text.splitlines() == [
        "set -euo pipefail",
        "",
        "if ! command -v curl >/dev/null 2>&1; then",
        "    true",
        "    true",
        "fi",
        *["true"] * 5,
        "python3 -m pytest $TEST_DIR/test_outputs.py -rA",
    ]
    assert result.dropped_packages == ["curl", "pytest==8.3.4", "pandas==2.2.3", "numpy==2.2.1"]
    script = tmp_path / "body.sh"
    script.write_text(result.text)
    subprocess.run(["bash", "-n", str(script)], check=True)


def test_import_many_takes_harbor_bundles_too(tmp_path: Path) -> None:
    from envpipeline.terminal.families.base import write_generated
    from tests.unit.test_harbor_task_toml import HARBOR_13_TASK_TOML
    from tests.unit.test_static_checks import tiny_task

    root = tmp_path / "tasks"
    make_tb1(root, "alpha")
    harbor = write_generated(tiny_task(), root / "native")
    (harbor / "task.toml").write_text(HARBOR_13_TASK_TOML)
    (harbor / "tests/helper.sh").write_text("#!/bin/bash\nuv run check.py || exit 1\n")
    reports = {r.task: r for r in import_many(root, tmp_path / "out")}
    assert sorted(reports) == ["alpha", "terminal-bench/fix-the-compiler"]
    native = reports["terminal-bench/fix-the-compiler"]
    assert native.ok and native.source_format == "harbor" and native.out.endswith("/native")
    assert any("environment.mount_cache" in w for w in native.warnings)  # unknown key reported
    assert (
        tmp_path / "out/native/tests/helper.sh"
    ).read_text() == "#!/bin/bash\npython3 check.py || exit 1\n"
    assert [(r.file, r.replacement) for r in native.rewrites] == [("tests/helper.sh", "python3 check.py")]
    assert tomllib.loads((tmp_path / "out/native/task.toml").read_text()) == tomllib.loads(
        HARBOR_13_TASK_TOML
    )


# ---- needs_network_at_test: what the tests still fetch after the offline rewrite -------------


def test_tests_that_fetch_at_test_time_are_flagged(tmp_path: Path) -> None:
    run_tests = (
        "#!/bin/bash\npip install pytest\ngit clone https://github.com/example/fixtures /tmp/fx\n"
        "git clone /app/repo /tmp/local-copy\nwget -q https://example.com/data.csv -O /tmp/d.csv\n"
        'python3 -m pytest "$TEST_DIR/test_outputs.py" -rA\n'
    )
    helper = 'import requests\nDATA = requests.get("https://example.com/x.json").json()\n'
    task = make_tb1(tmp_path / "tb", files={"run-tests.sh": run_tests, "tests/helper.py": helper})
    report = import_terminal_bench(task, tmp_path / "out" / "net")
    flags = {f.file: f for f in report.flags if f.name == "needs_network_at_test"}
    assert set(flags) == {"run-tests.sh", "tests/helper.py"}
    lines = flags["run-tests.sh"].lines
    assert any("git clone https://github.com" in x for x in lines) and any("wget" in x for x in lines)
    assert not any("local-copy" in x or "pip install" in x for x in lines)  # local clone; pip rewritten
    assert flags["tests/helper.py"].lines == [
        'line 2: DATA = requests.get("https://example.com/x.json").json()'
    ]


def test_offline_tests_are_not_flagged(tmp_path: Path) -> None:
    report = import_terminal_bench(make_tb1(tmp_path / "tb"), tmp_path / "out" / "clean")
    assert not [f for f in report.flags if f.name == "needs_network_at_test"]


def test_a_harbor_test_sh_that_downloads_is_flagged(tmp_path: Path) -> None:
    from envpipeline.terminal.families.base import write_generated
    from envpipeline.terminal.families.registry import get_family
    from envpipeline.terminal.seed_import import import_bundle

    family = get_family("text-parsing")
    bundle = write_generated(family.generate(0, family.knobs_for("easy"), "easy"), tmp_path / "h")
    test_sh = bundle / "tests" / "test.sh"
    test_sh.write_text(
        test_sh.read_text().replace("\n", "\ncurl -fsSL https://example.com/expected.txt -o /tmp/e\n", 1)
    )
    report = import_bundle(bundle, tmp_path / "out" / "h")
    [flag] = [f for f in report.flags if f.name == "needs_network_at_test"]
    assert flag.file == "tests/test.sh" and "curl -fsSL https://example.com/expected.txt" in flag.lines[0]
