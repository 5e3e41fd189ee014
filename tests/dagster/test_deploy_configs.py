"""deploy/: every instance file passes Dagster's own instance schema, the compose and Helm files hang together.

The validators below return the problems they find; each has a test on a copy broken on purpose
(a misspelled key, a module that does not exist, a volume nobody declared) that it must report.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from dagster import (
    Array,
    Definitions,
    Field,
    Noneable,
    Permissive,
    Shape,
    StringSource,
)
from dagster._config import validate_config
from dagster._core.errors import DagsterInvalidConfigError
from dagster._core.instance.config import dagster_instance_config

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
INSTANCE_FILES = [
    REPO / "dagster.yaml",
    DEPLOY / "dagster.postgres.yaml",
    DEPLOY / "dagster.yaml",
    DEPLOY / "k8s" / "dagster.yaml",
    DEPLOY / "docker-local" / "dagster.yaml",
]
COMPOSE = DEPLOY / "docker-compose.yaml"
HELM_VALUES = DEPLOY / "k8s" / "values.yaml"
DAEMON_LAUNCHES = "daemon"  # the compose service whose environment launched runs inherit

#: K8sRunLauncher's instance config as dagster-k8s 0.29 declares it (DagsterK8sJobConfig's
#: config_type_run_launcher; dagster-k8s is not installed here, so its schema is mirrored).
K8S_RUN_LAUNCHER_SCHEMA = Shape(
    {
        "job_image": Field(Noneable(StringSource), is_required=False),
        "image_pull_policy": Field(Noneable(StringSource), is_required=False),
        "image_pull_secrets": Field(Noneable(Array(Shape({"name": StringSource}))), is_required=False),
        "service_account_name": Field(Noneable(StringSource), is_required=False),
        "env_config_maps": Field(Noneable(Array(StringSource)), is_required=False),
        "env_secrets": Field(Noneable(Array(StringSource)), is_required=False),
        "env_vars": Field(Noneable(Array(str)), is_required=False),
        "volume_mounts": Field(Array(Permissive({"name": StringSource})), is_required=False),
        "volumes": Field(Array(Permissive({"name": str})), is_required=False),
        "labels": Field(dict, is_required=False),
        "resources": Field(
            Noneable({"limits": Field(dict, is_required=False), "requests": Field(dict, is_required=False)}),
            is_required=False,
        ),
        "scheduler_name": Field(Noneable(StringSource), is_required=False),
        "security_context": Field(dict, is_required=False),
        "instance_config_map": Field(StringSource, is_required=True),
        "postgres_password_secret": Field(StringSource, is_required=False),
        "dagster_home": Field(StringSource, is_required=False),
        "load_incluster_config": Field(bool, is_required=False),
        "kubeconfig_file": Field(Noneable(str), is_required=False),
        "fail_pod_on_run_failure": Field(bool, is_required=False),
        "run_k8s_config": Field(Permissive(), is_required=False),
        "job_namespace": Field(StringSource, is_required=False),
        "only_allow_user_defined_k8s_config_fields": Field(Permissive(), is_required=False),
        "only_allow_user_defined_env_vars": Field(Array(str), is_required=False),
    }
)
#: configurable classes whose package is not installed here: (module, class) -> mirrored schema
MIRRORED_CLASSES = {("dagster_k8s", "K8sRunLauncher"): K8S_RUN_LAUNCHER_SCHEMA}
CONFIGURABLE_SECTIONS = ("run_launcher", "run_coordinator", "compute_logs", "local_artifact_storage")


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _config_errors(errors: list[Any]) -> list[str]:
    return [getattr(e, "message", str(e)) for e in errors]


def instance_problems(path: Path) -> list[str]:
    """What Dagster would refuse in an instance file: its instance schema, then each configured class's own."""
    try:
        config, _ = dagster_instance_config(str(path.parent), path.name)
    except DagsterInvalidConfigError as e:
        return [str(e), *_config_errors(list(e.errors))]
    problems = []
    for section in CONFIGURABLE_SECTIONS:
        if section not in config:
            continue
        module, cls = config[section]["module"], config[section]["class"]
        class_config = config[section].get("config") or {}
        mirrored = MIRRORED_CLASSES.get((module, cls))
        if mirrored is not None:
            schema = mirrored
        else:
            try:
                klass = getattr(importlib.import_module(module), cls)
            except (ImportError, AttributeError) as e:
                problems.append(f"{section}: {module}.{cls} cannot be imported: {e}")
                continue
            schema = klass.config_type()
        result = validate_config(schema, class_config)
        if not result.success:
            problems += [f"{section} ({cls}): {m}" for m in _config_errors(list(result.errors))]
    return problems


def env_vars_read(instance: Any) -> set[str]:
    """Every `env: NAME` an instance file reads."""
    if isinstance(instance, dict):
        if set(instance) == {"env"} and isinstance(instance["env"], str):
            return {instance["env"]}
        return set().union(*(env_vars_read(v) for v in instance.values())) if instance else set()
    if isinstance(instance, list):
        return set().union(*(env_vars_read(v) for v in instance)) if instance else set()
    return set()


def definitions_problems(module: str, attribute: str, working_directory: Path) -> list[str]:
    """A code location's module must be a file of the repository whose attribute is a loading Definitions."""
    source = working_directory / Path(*module.split(".")).with_suffix(".py")
    if not source.is_file():
        return [f"code location module {module} has no file {source}"]
    defs = getattr(importlib.import_module(module), attribute, None)
    if not isinstance(defs, Definitions):
        return [f"{module}.{attribute} is not a Definitions"]
    defs.resolve_all_job_defs()
    return []


def _option(args: list[str], *names: str) -> str | None:
    for i, arg in enumerate(args[:-1]):
        if arg in names:
            return args[i + 1]
    return None


def _environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: str(v) for k, v in env.items()}


def _dockerfile_problems(dockerfile: Path, context: Path) -> tuple[list[str], str | None]:
    problems, workdir = [], None
    for line in dockerfile.read_text().splitlines():
        words = line.split()
        if words[:1] == ["WORKDIR"]:
            workdir = words[1]
        if words[:1] == ["COPY"] and not any(w.startswith("--") for w in words[1:]):
            problems += [
                f"{dockerfile.name} copies missing {s}" for s in words[1:-1] if not (context / s).exists()
            ]
    return problems, workdir


def compose_problems(compose_file: Path, instance_file: Path) -> list[str]:
    """Files, commands, volumes, network and environment of the compose file, against its instance file."""
    compose = load_yaml(compose_file)
    instance = load_yaml(instance_file)
    here = compose_file.parent
    services: dict[str, dict[str, Any]] = compose["services"]
    problems: list[str] = []
    declared_volumes = compose.get("volumes") or {}
    volume_names = {(spec or {}).get("name", key) for key, spec in declared_volumes.items()}
    network_names = {(spec or {}).get("name", key) for key, spec in (compose.get("networks") or {}).items()}
    workdir = None

    for name, service in services.items():
        build = service.get("build")
        if build is not None:
            context = (here / build["context"]).resolve()
            dockerfile = context / build.get("dockerfile", "Dockerfile")
            if not dockerfile.is_file():
                problems.append(f"{name}: no Dockerfile {dockerfile}")
            else:
                copied, workdir = _dockerfile_problems(dockerfile, context)
                problems += copied
        for volume in service.get("volumes") or []:
            source = volume.split(":")[0]
            if source.startswith((".", "/")):
                if source.startswith(".") and not (here / source).exists():
                    problems.append(f"{name}: mounts missing file {source}")
            elif source not in declared_volumes:
                problems.append(f"{name}: volume {source} is not declared under volumes:")
        for network in service.get("networks") or []:
            if network not in (compose.get("networks") or {}):
                problems.append(f"{name}: network {network} is not declared under networks:")
        for dependency in service.get("depends_on") or {}:
            if dependency not in services:
                problems.append(f"{name}: depends on unknown service {dependency}")

    # the code location: a gRPC server of a module of this repository
    code_name, code = next(
        ((n, s) for n, s in services.items() if s.get("command", [])[:3] == ["dagster", "api", "grpc"]),
        (None, None),
    )
    if code is None:
        return [*problems, "no service runs `dagster api grpc` (the code location)"]
    args = code["command"]
    module, attribute = _option(args, "--module-name", "-m"), _option(args, "--attribute", "-a")
    if module is None or attribute is None:
        problems.append(f"{code_name}: the gRPC server names no --module-name and --attribute")
    else:
        if workdir is not None and _option(args, "--working-directory", "-d") != workdir:
            problems.append(f"{code_name}: --working-directory is not the image's WORKDIR {workdir}")
        problems += definitions_problems(module, attribute, REPO)

    # webserver and daemon: the workspace they are given exists and points at the code location
    for name, service in services.items():
        command = service.get("command") or []
        workspace_path = _option(command, "-w", "--workspace")
        if workspace_path is None:
            continue
        mounts = dict(reversed(v.split(":")[:2]) for v in service.get("volumes") or [])
        if workspace_path not in mounts:
            problems.append(f"{name}: workspace {workspace_path} is not mounted")
            continue
        if not (here / mounts[workspace_path]).is_file():
            continue  # reported with the mounts above
        workspace = load_yaml(here / mounts[workspace_path])
        for location in workspace["load_from"]:
            grpc = location.get("grpc_server")
            if grpc is None:
                problems.append(f"{name}: the workspace loads no grpc_server")
            elif grpc["host"] != code_name or str(grpc["port"]) != _option(args, "--port", "-p"):
                problems.append(f"{name}: the workspace's grpc_server is not {code_name}'s host and port")

    # every Dagster service gets the instance file at $DAGSTER_HOME and the variables it reads
    needed_env = env_vars_read(instance)
    for name, service in services.items():
        env = _environment(service)
        if "DAGSTER_HOME" not in env:
            continue
        mounts = dict(reversed(v.split(":")[:2]) for v in service.get("volumes") or [])
        mounted = mounts.get(f"{env['DAGSTER_HOME']}/dagster.yaml")
        if mounted is None or (here / mounted).resolve() != instance_file.resolve():
            problems.append(f"{name}: $DAGSTER_HOME/dagster.yaml is not {instance_file.name}")
        if missing := needed_env - set(env):
            problems.append(f"{name}: environment lacks {sorted(missing)} that the instance reads")

    # the run launcher's containers: the same image, network, volumes and data folder as the code location
    launcher = instance.get("run_launcher") or {}
    if launcher.get("class") == "DockerRunLauncher":
        config = launcher.get("config") or {}
        data_home, code_mounts = _environment(code).get("ENVPIPELINE_HOME"), code.get("volumes") or []
        if config.get("network") not in network_names:
            problems.append(f"run launcher network {config.get('network')} is no compose network's name")
        for volume in (config.get("container_kwargs") or {}).get("volumes") or []:
            source, target = volume.split(":")[:2]
            if not source.startswith("/") and source not in volume_names:
                problems.append(f"run launcher volume {source} is no compose volume's name")
            if target == data_home and f"{_key_of(declared_volumes, source)}:{target}" not in code_mounts:
                problems.append(f"run launcher mounts {source} at {target}, the code location does not")
        daemon_env = _environment(services.get(DAEMON_LAUNCHES, {}))
        passed = {v for v in config.get("env_vars") or [] if "=" not in v}  # NAME: copied from the daemon
        if missing := passed - set(daemon_env):
            problems.append(f"run launcher passes {sorted(missing)} that the {DAEMON_LAUNCHES} does not have")
        if "DAGSTER_CURRENT_IMAGE" not in _environment(code) and "image" not in config:
            problems.append("launched runs have no image: set DAGSTER_CURRENT_IMAGE on the code location")
    data_home = _environment(code).get("ENVPIPELINE_HOME")
    if data_home is None or not any(v.split(":")[1:2] == [data_home] for v in code.get("volumes") or []):
        problems.append(f"{code_name}: ENVPIPELINE_HOME {data_home} is not a mounted volume")
    return problems


def _key_of(declared_volumes: dict[str, Any], name: str) -> str:
    """The compose key of the volume whose Docker name is `name`."""
    return next((k for k, spec in declared_volumes.items() if (spec or {}).get("name", k) == name), name)


#: the chart's keys this project sets, by section (dagster/dagster 1.13); anything else is a typo
HELM_KEYS = {
    "": {
        "global",
        "dagster-user-deployments",
        "dagsterWebserver",
        "runLauncher",
        "dagsterDaemon",
        "postgresql",
        "generatePostgresqlPasswordSecret",
    },
    "global": {"dagsterHome", "postgresqlSecretName", "serviceAccountName"},
    "deployment": {
        "name",
        "image",
        "dagsterApiGrpcArgs",
        "port",
        "env",
        "envConfigMaps",
        "envSecrets",
        "volumes",
        "volumeMounts",
        "includeConfigInLaunchedRuns",
        "resources",
    },
    "k8sRunLauncher": {
        "jobNamespace",
        "loadInclusterConfig",
        "kubeconfigFile",
        "envConfigMaps",
        "envSecrets",
        "envVars",
        "volumes",
        "volumeMounts",
        "labels",
        "resources",
        "failPodOnRunFailure",
        "runK8sConfig",
        "imagePullPolicy",
        "schedulerName",
        "securityContext",
    },
    "runCoordinator": {"enabled", "type", "config"},
    "queuedRunCoordinator": {
        "maxConcurrentRuns",
        "tagConcurrencyLimits",
        "dequeueIntervalSeconds",
        "dequeueUseThreads",
        "dequeueNumWorkers",
        "blockOpConcurrencyLimitedRuns",
    },
    "postgresql": {
        "enabled",
        "postgresqlHost",
        "postgresqlUsername",
        "postgresqlPassword",
        "postgresqlDatabase",
        "postgresqlParams",
        "postgresqlScheme",
        "service",
    },
}


def helm_values_problems(path: Path) -> list[str]:
    """Keys the chart knows, the K8s run launcher and queued coordinator, a code location that loads."""
    values = load_yaml(path)
    problems = [f"unknown top-level key {k}" for k in set(values) - HELM_KEYS[""]]
    problems += [f"unknown global key {k}" for k in set(values.get("global") or {}) - HELM_KEYS["global"]]
    for key in set(values.get("postgresql") or {}) - HELM_KEYS["postgresql"]:
        problems.append(f"unknown postgresql key {key}")
    launcher = values.get("runLauncher") or {}
    if launcher.get("type") != "K8sRunLauncher":
        problems.append(f"runLauncher.type is {launcher.get('type')}, not K8sRunLauncher")
    k8s = (launcher.get("config") or {}).get("k8sRunLauncher") or {}
    problems += [f"unknown k8sRunLauncher key {k}" for k in set(k8s) - HELM_KEYS["k8sRunLauncher"]]
    coordinator = (values.get("dagsterDaemon") or {}).get("runCoordinator") or {}
    problems += [f"unknown runCoordinator key {k}" for k in set(coordinator) - HELM_KEYS["runCoordinator"]]
    if coordinator.get("type") != "QueuedRunCoordinator":
        problems.append("dagsterDaemon.runCoordinator.type is not QueuedRunCoordinator")
    queued = (coordinator.get("config") or {}).get("queuedRunCoordinator") or {}
    problems += [
        f"unknown queuedRunCoordinator key {k}" for k in set(queued) - HELM_KEYS["queuedRunCoordinator"]
    ]
    deployments = (values.get("dagster-user-deployments") or {}).get("deployments") or []
    if not deployments:
        problems.append("no user code deployment")
    for deployment in deployments:
        problems += [f"unknown deployment key {k}" for k in set(deployment) - HELM_KEYS["deployment"]]
        args = deployment.get("dagsterApiGrpcArgs") or []
        module, attribute = _option(args, "--module-name", "-m"), _option(args, "--attribute", "-a")
        if module is None or attribute is None:
            problems.append(f"deployment {deployment.get('name')} names no --module-name and --attribute")
        else:
            problems += definitions_problems(module, attribute, REPO)
        volumes = {v["name"] for v in deployment.get("volumes") or []}
        problems += [
            f"deployment mounts undeclared volume {m['name']}"
            for m in deployment.get("volumeMounts") or []
            if m["name"] not in volumes
        ]
        data_home = {e["name"]: e.get("value") for e in deployment.get("env") or []}.get("ENVPIPELINE_HOME")
        if data_home not in {m.get("mountPath") for m in deployment.get("volumeMounts") or []}:
            problems.append(f"ENVPIPELINE_HOME {data_home} is not a mounted volume")
    return problems


# --- the shipped files ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_instance_file_passes_dagsters_instance_schema(path):
    assert instance_problems(path) == []


def test_cluster_instances_keep_runs_in_postgres_queue_them_and_cap_the_catalog_pool():
    for path in (DEPLOY / "dagster.postgres.yaml", DEPLOY / "dagster.yaml", DEPLOY / "k8s" / "dagster.yaml"):
        instance = load_yaml(path)
        assert set(instance["storage"]) == {"postgres"}, path
        assert env_vars_read(instance) >= {"DAGSTER_PG_HOST", "DAGSTER_PG_PASSWORD", "DAGSTER_PG_DB"}, path
        assert instance["concurrency"]["pools"]["default_limit"] == 1, path
    for path in (DEPLOY / "dagster.yaml", DEPLOY / "k8s" / "dagster.yaml"):
        instance = load_yaml(path)
        assert instance["run_coordinator"]["class"] == "QueuedRunCoordinator"
        assert instance["concurrency"]["runs"]["max_concurrent_runs"] >= 1
    assert load_yaml(DEPLOY / "dagster.yaml")["run_launcher"]["class"] == "DockerRunLauncher"
    k8s = load_yaml(DEPLOY / "k8s" / "dagster.yaml")["run_launcher"]
    assert (k8s["module"], k8s["class"]) == ("dagster_k8s", "K8sRunLauncher")


def test_the_compose_file_hangs_together():
    compose = load_yaml(COMPOSE)
    assert {"postgres", "code", "webserver", "daemon"} <= set(compose["services"])
    assert compose_problems(COMPOSE, DEPLOY / "dagster.yaml") == []


def test_the_helm_values_name_the_k8s_launcher_and_a_loading_code_location():
    assert helm_values_problems(HELM_VALUES) == []


# --- the validators reject configs broken on purpose ---------------------------------------------


def _broken_copy(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert old in text, f"{old!r} not in {source}"
    target = tmp_path / source.name
    target.write_text(text.replace(old, new, 1))
    return target


@pytest.mark.parametrize(
    ("source", "old", "new", "reported"),
    [
        (DEPLOY / "dagster.yaml", "hostname:", "hostnmae:", "hostnmae"),
        (DEPLOY / "dagster.postgres.yaml", "run_monitoring:", "run_monitorng:", "run_monitorng"),
        (DEPLOY / "dagster.yaml", "network: envpipeline", "netwrok: envpipeline", "netwrok"),
        (
            DEPLOY / "dagster.yaml",
            "dequeue_interval_seconds: 5",
            "dequeue_interval_secs: 5",
            "dequeue_interval_secs",
        ),
        (DEPLOY / "k8s" / "dagster.yaml", "job_namespace:", "job_namespce:", "job_namespce"),
        (DEPLOY / "k8s" / "dagster.yaml", "instance_config_map: dagster-instance", "", "instance_config_map"),
        (
            DEPLOY / "dagster.yaml",
            "class: DockerRunLauncher",
            "class: DockerRunLaucher",
            "cannot be imported",
        ),
    ],
    ids=["storage", "top-level", "docker-launcher", "coordinator", "k8s-launcher", "k8s-required", "class"],
)
def test_the_instance_validator_rejects_a_misspelled_or_missing_key(tmp_path, source, old, new, reported):
    problems = instance_problems(_broken_copy(tmp_path, source, old, new))
    assert problems and reported in "\n".join(problems)


def _compose_copy(tmp_path: Path) -> Path:
    """deploy/'s compose file and the files it mounts, in tmp_path (the build context still the repository)."""
    for name in ("dagster.yaml", "workspace.yaml", "Dockerfile"):
        shutil.copy(DEPLOY / name, tmp_path / name)
    target = tmp_path / COMPOSE.name
    target.write_text(COMPOSE.read_text().replace("context: ..", f"context: {REPO}"))
    return target


def test_an_unchanged_copy_of_the_compose_files_passes(tmp_path):
    assert compose_problems(_compose_copy(tmp_path), tmp_path / "dagster.yaml") == []


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        ("- assets.definitions\n", "- assets.definitons\n", "has no file"),
        ("- envpipeline-data:/data\n", "- envpipeline-dat:/data\n", "volume envpipeline-dat is not declared"),
        ("name: envpipeline-data", "name: envpipeline-lake", "run launcher volume envpipeline-data"),
        ("ENVPIPELINE_HOME: /data", "ENVPIPELINE_HOME: /lake", "ENVPIPELINE_HOME /lake"),
        ("  DAGSTER_PG_DB: dagster\n", "", "environment lacks ['DAGSTER_PG_DB']"),
        ("./workspace.yaml:", "./workspaces.yaml:", "mounts missing file ./workspaces.yaml"),
        ("      DAGSTER_CURRENT_IMAGE: envpipeline/app:latest\n", "", "launched runs have no image"),
    ],
    ids=["module", "volume", "volume-name", "data-home", "env", "mount", "image"],
)
def test_the_compose_validator_rejects_a_broken_file(tmp_path, old, new, reported):
    compose = _compose_copy(tmp_path)
    text = compose.read_text()
    assert old in text
    compose.write_text(text.replace(old, new, 1))
    problems = compose_problems(compose, tmp_path / "dagster.yaml")
    assert reported in "\n".join(problems), problems


def test_the_compose_validator_rejects_a_workspace_that_misses_the_code_location(tmp_path):
    compose = _compose_copy(tmp_path)
    workspace = tmp_path / "workspace.yaml"
    workspace.write_text(workspace.read_text().replace("port: 4000", "port: 4001"))
    problems = compose_problems(compose, tmp_path / "dagster.yaml")
    assert any("grpc_server is not code's host and port" in p for p in problems), problems


def test_the_compose_validator_rejects_a_launcher_env_var_the_daemon_lacks(tmp_path):
    compose = _compose_copy(tmp_path)
    instance = tmp_path / "dagster.yaml"
    instance.write_text(instance.read_text().replace("- ENVPIPELINE_DEPLOYMENT", "- ENVPIPELINE_DEPLOYMNET"))
    problems = compose_problems(compose, instance)
    assert any("ENVPIPELINE_DEPLOYMNET" in p for p in problems), problems


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        ("jobNamespace:", "jobNamespce:", "unknown k8sRunLauncher key jobNamespce"),
        ("type: K8sRunLauncher", "type: CeleryK8sRunLauncher", "not K8sRunLauncher"),
        ("- assets.definitions", "- assets.missing", "has no file"),
        ("maxConcurrentRuns:", "maxConcurentRuns:", "maxConcurentRuns"),
        ("mountPath: /data", "mountPath: /lake", "ENVPIPELINE_HOME /data is not a mounted volume"),
    ],
    ids=["launcher-key", "launcher-type", "module", "coordinator-key", "data-home"],
)
def test_the_helm_validator_rejects_a_broken_values_file(tmp_path, old, new, reported):
    problems = helm_values_problems(_broken_copy(tmp_path, HELM_VALUES, old, new))
    assert reported in "\n".join(problems), problems


def test_env_vars_read_finds_every_env_reference():
    instance = {"a": {"env": "X"}, "b": [{"c": {"env": "Y"}}], "d": "env", "e": {"env": "Z", "other": 1}}
    assert env_vars_read(instance) == {"X", "Y"}


# --- deploy/docker-local: one machine, each run in a container of the project image ---------------

DOCKER_LOCAL = DEPLOY / "docker-local"


def docker_local_problems(instance_file: Path, workspace_file: Path) -> list[str]:
    """Runs in the project image see every host path the instance records (same-path mounts of the
    profile's root, which holds DAGSTER_HOME and the data folder) and load this repository's code."""
    launcher = load_yaml(instance_file).get("run_launcher") or {}
    if (launcher.get("module"), launcher.get("class")) != ("dagster_docker", "DockerRunLauncher"):
        return ["run_launcher is not dagster_docker.DockerRunLauncher"]
    config = launcher.get("config") or {}
    coordinator = load_yaml(instance_file).get("run_coordinator") or {}
    problems = (
        []
        if coordinator.get("class") == "DefaultRunCoordinator"
        # without it Dagster 1.13 queues every run for a daemon the profile does not start
        else ["run_coordinator is not DefaultRunCoordinator: submitted runs would wait for a daemon"]
    )
    problems += (
        []
        if str(config.get("image", "")).startswith("envpipeline-project:")
        else ["image is not envpipeline-project"]
    )
    kwargs = config.get("container_kwargs") or {}
    for volume in kwargs.get("volumes") or []:
        source, target = volume.split(":")[:2]
        if source != target:
            problems.append(
                f"volume {volume} mounts {source} at another path: recorded paths would not resolve"
            )
    env = dict(v.split("=", 1) if "=" in v else (v, None) for v in config.get("env_vars") or [])
    problems += [f"env_vars lacks {name}" for name in ("DAGSTER_HOME", "ENVPIPELINE_HOME") if name not in env]
    if env.get("ENVPIPELINE_SANDBOX") == "local" and not kwargs.get("privileged"):
        caps = kwargs.get("cap_add") or []
        for cap, why in (("SYS_ADMIN", "or a privileged container"), ("NET_ADMIN", "for its loopback")):
            if cap not in caps:
                problems.append(f"the local sandbox needs CAP_{cap} (cap_add) {why}")
    problems += [
        f"the Engine API refuses security_opt {opt} (a docker CLI option, not a security option)"
        for opt in kwargs.get("security_opt") or []
        if str(opt).startswith("systempaths")
    ]
    for location in load_yaml(workspace_file)["load_from"]:
        module = location.get("python_module") or {}
        if not module:
            problems.append("the workspace loads no python_module")
            continue
        # resolved as Dagster does for a python_module: against the loading process's current
        # directory, which deploy/README.md makes the repository root (dagster/_core/workspace/load.py
        # rebases only python_file's working_directory onto the workspace file)
        workdir = (REPO / module.get("working_directory", ".")).resolve()
        if workdir != REPO.resolve():
            problems.append(f"working_directory {workdir} is not the repository")
        else:
            problems += definitions_problems(module["module_name"], module["attribute"], workdir)
    return problems


def test_the_docker_local_profile_mounts_its_root_at_the_same_path_and_loads_the_repository():
    assert docker_local_problems(DOCKER_LOCAL / "dagster.yaml", DOCKER_LOCAL / "workspace.yaml") == []


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        (
            "- /srv/envpipeline:/srv/envpipeline",
            "- /srv/envpipeline:/data",
            "mounts /srv/envpipeline at another path",
        ),
        ("      - ENVPIPELINE_HOME\n", "", "env_vars lacks ENVPIPELINE_HOME"),
        ("        - SYS_ADMIN\n", "        - CHOWN\n", "needs CAP_SYS_ADMIN"),
        ("        - NET_ADMIN\n", "", "needs CAP_NET_ADMIN"),
        (
            "        - apparmor=unconfined\n",
            "        - apparmor=unconfined\n        - systempaths=unconfined\n",
            "the Engine API refuses security_opt systempaths",
        ),
        ("class: DockerRunLauncher", "class: DefaultRunLauncher", "is not dagster_docker.DockerRunLauncher"),
        ("  class: DefaultRunCoordinator\n", "  class: QueuedRunCoordinator\n", "would wait for a daemon"),
    ],
    ids=["other-path", "env", "caps", "net-admin", "systempaths", "launcher", "queued"],
)
def test_the_docker_local_validator_rejects_a_broken_profile(tmp_path, old, new, reported):
    broken = _broken_copy(tmp_path, DOCKER_LOCAL / "dagster.yaml", old, new)
    problems = docker_local_problems(broken, DOCKER_LOCAL / "workspace.yaml")
    assert reported in "\n".join(problems), problems


def test_the_docker_local_validator_rejects_a_workspace_outside_the_repository(tmp_path):
    workspace = _broken_copy(
        tmp_path, DOCKER_LOCAL / "workspace.yaml", "working_directory: .", "working_directory: .."
    )
    problems = docker_local_problems(DOCKER_LOCAL / "dagster.yaml", workspace)
    assert any("is not the repository" in p for p in problems), problems
