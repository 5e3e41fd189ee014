"""task.toml (Harbor schema 1.0 and 1.1): read, write, validate, round trip."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from envpipeline.models.bundle import (
    Author,
    EnvironmentSection,
    MetadataSection,
    TaskConfig,
    TaskSection,
    VerifierSection,
)
from envpipeline.terminal.bundle import (
    BundleFormatError,
    dump_task_config,
    load_task_config,
    read_bundle,
    task_config_warnings,
    write_files,
)

V10 = """version = "1.0"

[metadata]
author_name = "Jane Doe"
author_email = "jane@example.com"
difficulty = "medium"
category = "data-processing"
tags = ["csv", "python"]

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = 600.0

[environment]
build_timeout_sec = 600.0
cpus = 2.0
memory_mb = 2048
storage_mb = 4096
"""

V11 = """schema_version = "1.1"

[task]
name = "acme/csv-merge"
description = "Merge two CSV files"
authors = [{ name = "Jane Doe", email = "jane@example.com" }]
keywords = ["csv"]

[verifier]
timeout_sec = 90.0
env = { STRICT = "1" }

[environment]
network_mode = "no-network"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "task.toml"
    path.write_text(text)
    return path


def test_reads_schema_10(tmp_path: Path) -> None:
    config = load_task_config(_write(tmp_path, V10))
    assert config.effective_schema == "1.0"
    assert config.task is None
    assert config.metadata.difficulty == "medium"
    assert config.metadata.tags == ["csv", "python"]
    assert config.environment.cpus == 2.0 and config.environment.memory_mb == 2048
    assert config.environment.network_mode is None


def test_reads_schema_11(tmp_path: Path) -> None:
    config = load_task_config(_write(tmp_path, V11))
    assert config.effective_schema == "1.1"
    assert config.task is not None and config.task.name == "acme/csv-merge"
    assert config.task.authors == [Author(name="Jane Doe", email="jane@example.com")]
    assert config.verifier.env == {"STRICT": "1"}
    assert config.environment.network_mode == "no-network"


@pytest.mark.parametrize("text", [V10, V11])
def test_round_trip(tmp_path: Path, text: str) -> None:
    config = load_task_config(_write(tmp_path, text))
    again = load_task_config(_write(tmp_path, dump_task_config(config)))
    assert again == config


def test_round_trip_of_built_configs(tmp_path: Path) -> None:
    v10 = TaskConfig(
        metadata=MetadataSection(difficulty="hard", tags=["x"], envpipeline={"family": "f", "seed": 3}),
        verifier=VerifierSection(timeout_sec=30.0),
    )
    v11 = TaskConfig(
        version="1.1",
        schema_version="1.1",
        task=TaskSection(name="org/name", authors=[Author(name="A")]),
        verifier=VerifierSection(env={"K": "V"}),
        environment=EnvironmentSection(network_mode="no-network"),
    )
    for config in (v10, v11):
        assert load_task_config(_write(tmp_path, dump_task_config(config))) == config
    assert "env =" not in dump_task_config(v10)  # 1.1-only extras stay out of 1.0 files
    assert "[verifier.env]" not in dump_task_config(v10)


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "version = \n[metadata")
    with pytest.raises(BundleFormatError, match="invalid TOML") as err:
        load_task_config(path)
    assert str(path) in str(err.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BundleFormatError, match="missing task.toml"):
        load_task_config(tmp_path / "task.toml")


def test_task_section_needs_schema_11(tmp_path: Path) -> None:
    text = 'version = "1.0"\n\n[task]\nname = "acme/x"\n'
    with pytest.raises(BundleFormatError, match=r'\[task\] needs schema_version = "1.1" or later'):
        load_task_config(_write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('version = "1.0"\nsurprise = 1\n', "surprise"),
        ('version = "1.0"\n[verifier]\ntimeout = 3\n', "verifier.timeout"),
        ('version = "1.0"\n[unknown_section]\na = 1\n', "unknown_section"),
        (
            'schema_version = "1.3"\n[[environment.mcp_servers]]\nname = "m"\nurl = "http://x"\nheaders = 1\n',
            "environment.mcp_servers.0.headers",
        ),
    ],
)
def test_unknown_keys_kept_and_reported(tmp_path: Path, text: str, where: str) -> None:
    config = load_task_config(_write(tmp_path, text))
    assert where in config.unknown_keys
    assert where in task_config_warnings(config)[0]
    assert tomllib.loads(dump_task_config(config)) == tomllib.loads(text)


def test_free_form_metadata_is_not_unknown(tmp_path: Path) -> None:
    config = load_task_config(_write(tmp_path, 'version = "1.0"\n[metadata]\nowner = "x"\n'))
    assert config.unknown_keys == {} and task_config_warnings(config) == []
    assert config.metadata.model_extra == {"owner": "x"}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('version = "2.0"\n', "version"),
        ('[metadata]\ndifficulty = "insane"\n', "metadata.difficulty"),
        ("[verifier]\ntimeout_sec = -1\n", "verifier.timeout_sec"),
        ('schema_version = "1.1"\n[task]\nname = "no-org"\n', "task.name"),
        ('[environment]\nnetwork_mode = "wide-open"\n', "environment.network_mode"),
    ],
)
def test_bad_values_rejected(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(BundleFormatError, match=f"{where}: "):
        load_task_config(_write(tmp_path, text))


def test_read_bundle_and_name(tmp_path: Path) -> None:
    write_files(tmp_path, {"task.toml": V11, "instruction.md": "Do it.\n"})
    bundle = read_bundle(tmp_path)
    assert bundle.name == "acme/csv-merge"
    assert bundle.instruction == "Do it.\n"
    (tmp_path / "instruction.md").unlink()
    with pytest.raises(BundleFormatError, match="missing instruction.md"):
        read_bundle(tmp_path)


def test_write_files_stays_inside(tmp_path: Path) -> None:
    with pytest.raises(BundleFormatError, match="outside the bundle"):
        write_files(tmp_path, {"../escape.txt": "x"})
    write_files(tmp_path, {"tests/test.sh": "#!/bin/bash\n", "a/b.txt": b"\x00"})
    assert (tmp_path / "tests/test.sh").stat().st_mode & 0o111
    assert not (tmp_path / "a/b.txt").stat().st_mode & 0o111
