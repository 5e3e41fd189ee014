"""What an image build may reach: the package registries (default) or nothing (``ENVPIPELINE_BUILD_NETWORK=none``).

Bundle images are built on Docker's default bridge network, so ``apt-get install`` reaches the
Debian mirror and ``pip install`` reaches the Python package index; the agent and verifier
containers always run with ``--network none``. Python packages need the host's pip configuration:
`pip_build_args` reads it -- pip's own files and ``PIP_*`` variables, in pip's order of
precedence (https://pip.pypa.io/en/stable/topics/configuration/) -- and `with_build_args`
declares the values after every FROM as ``ARG``: RUN steps see them, the image's ENV never does.

A host-side CA bundle (pip's ``cert``, e.g. a TLS-inspecting proxy's CA) is a host path the build
cannot read, so the index hosts it protects are passed as ``PIP_TRUSTED_HOST`` instead: the build
then reaches exactly the hosts the host's pip reaches, through the same proxy.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from envpipeline.errors import ConfigError
from envpipeline.sandbox import dockerfile as df

#: The operator switch: ``registries`` (default) or ``none`` (builds fully offline).
BUILD_NETWORK_ENV = "ENVPIPELINE_BUILD_NETWORK"
#: pip's configuration files, lowest precedence first (global, then user; our HOME may be
#: overridden, so root's files are read too).
PIP_CONFIG_FILES = (
    Path("/etc/pip.conf"),
    Path("/etc/xdg/pip/pip.conf"),
    Path("/root/.pip/pip.conf"),
    Path("/root/.config/pip/pip.conf"),
)
#: pip settings a build may receive (config key -> build arg); host paths (cert, find-links) never.
PIP_SETTINGS = {
    "index-url": "PIP_INDEX_URL",
    "extra-index-url": "PIP_EXTRA_INDEX_URL",
    "trusted-host": "PIP_TRUSTED_HOST",
    "timeout": "PIP_DEFAULT_TIMEOUT",
    "default-timeout": "PIP_DEFAULT_TIMEOUT",
    "retries": "PIP_RETRIES",
}
#: Proxy variables Docker itself predefines as build args (passed when the host sets them).
PROXY_ARGS = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
#: A Dockerfile that runs pip (the only consumer of the pip build args).
PIP_COMMAND = re.compile(r"\bpip3?\b")
#: Hosts pip reaches when no index is configured.
DEFAULT_INDEX_HOSTS = ("pypi.org", "files.pythonhosted.org")


class BuildNetwork(StrEnum):
    """The network of ``docker build``."""

    REGISTRIES = "registries"
    NONE = "none"

    @property
    def docker_network(self) -> str:
        """The ``docker build --network`` value."""
        return "default" if self is BuildNetwork.REGISTRIES else "none"


def build_network_from_env(environ: Mapping[str, str] | None = None) -> BuildNetwork:
    """The operator's choice (`BUILD_NETWORK_ENV`; registries when unset); ConfigError for a typo."""
    value = (environ if environ is not None else os.environ).get(BUILD_NETWORK_ENV, "").strip().lower()
    try:
        return BuildNetwork(value or BuildNetwork.REGISTRIES)
    except ValueError as e:
        choices = ", ".join(n.value for n in BuildNetwork)
        raise ConfigError(f"{BUILD_NETWORK_ENV}={value!r}: expected one of {choices}") from e


def _config_files(environ: Mapping[str, str]) -> list[Path]:
    files = list(PIP_CONFIG_FILES)
    home = environ.get("HOME")
    if home:
        files += [Path(home, ".pip/pip.conf"), Path(home, ".config/pip/pip.conf")]
    if environ.get("PIP_CONFIG_FILE"):
        files.append(Path(environ["PIP_CONFIG_FILE"]))
    return list(dict.fromkeys(files))


def _read_pip_files(files: Iterable[Path]) -> dict[str, str]:
    """pip settings from the files ([global] then [install]; later files win)."""
    settings: dict[str, str] = {}
    for path in files:
        parser = configparser.RawConfigParser()
        try:
            parser.read(path)
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue  # pip itself would refuse this file; the build just gets no setting from it
        for section in ("global", "install"):
            if parser.has_section(section):
                settings |= {key: " ".join(value.split()) for key, value in parser.items(section)}
    return settings


def pip_build_args(
    environ: Mapping[str, str] | None = None, files: Iterable[Path] | None = None
) -> dict[str, str]:
    """The host's pip index settings as build args (``PIP_INDEX_URL``, ``PIP_TRUSTED_HOST``...)."""
    environ = environ if environ is not None else os.environ
    settings = _read_pip_files(files if files is not None else _config_files(environ))
    args = {PIP_SETTINGS[k]: v for k, v in settings.items() if k in PIP_SETTINGS and v}
    args |= {v: environ[v] for v in set(PIP_SETTINGS.values()) if environ.get(v)}
    cert = environ.get("PIP_CERT") or settings.get("cert")
    if cert and "PIP_TRUSTED_HOST" not in args:
        urls = [args.get("PIP_INDEX_URL", ""), *args.get("PIP_EXTRA_INDEX_URL", "").split()]
        hosts = [urlsplit(u).hostname for u in urls if u] or []
        args["PIP_TRUSTED_HOST"] = " ".join(dict.fromkeys([*(h for h in hosts if h), *DEFAULT_INDEX_HOSTS]))
    return args


def registry_build_args(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every build arg a registry build gets: pip's settings and the host's proxy variables."""
    environ = environ if environ is not None else os.environ
    return pip_build_args(environ) | {k: environ[k] for k in PROXY_ARGS if environ.get(k)}


def with_build_args(text: str, names: Iterable[str]) -> str:
    """The Dockerfile with ``ARG <name>`` declared at the start of every stage (after each FROM).

    A Dockerfile that does not parse is returned unchanged (its build reports why).
    """
    names = sorted(n for n in names if n not in PROXY_ARGS)  # Docker predefines the proxy ones
    try:
        froms = [i.line for i in df.parse_dockerfile(text) if i.keyword == "FROM"]
    except df.EnvironmentBuildError:
        return text
    if not names or not froms:
        return text
    lines = text.splitlines()
    for start in reversed(froms):
        end = start - 1
        while lines[end].rstrip().endswith("\\") and end + 1 < len(lines):
            end += 1
        lines[end + 1 : end + 1] = [f"ARG {name}" for name in names]
    return "\n".join(lines) + "\n"
