"""Base-image resolution: what a bundle's image is built from here, or `needs_image` when nothing local stands in.

No registry is reachable, so a foreign image (``FROM python:3.13-slim``, ``[environment].docker_image``)
cannot be pulled. `resolve_image` looks it up in `KNOWN_IMAGES`, a typed table of the images real
Terminal-Bench / Harbor tasks start from, each with a note of what differs on the locally built base
image (`BASE_IMAGE`); an image the engine already has (the operator loaded or built it) is used as
is (``provided``). Anything else -- SWE-bench instance images, task-specific toolchains, images we
have never seen -- resolves to ``needs_image``: never a silent swap, the bundle is not run and the
verdict says how to provide the image.

`resolve_bundle_images` covers every FROM line of ``environment/Dockerfile`` and
``[environment].docker_image`` (a prebuilt image of that Dockerfile in Harbor, used instead of
building it -- harbor-framework/harbor ``src/harbor/models/task/config.py`` EnvironmentConfig; with a
Dockerfile present we build it ourselves, unless the image is a known non-substitutable one).

Sources of the table: the Terminal-Bench base images (laude-institute/terminal-bench
``shared/base-images/{python-3-13,ubuntu-24-04,deveval}``: python:3.13-slim-bookworm / ubuntu:24.04
plus tmux, asciinema, curl; deveval: a multi-language toolchain), and the FROM lines most used by
public TB1/TB2 tasks (``ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624``, ``python-3-13:20250620``,
``python:3.1x-slim[-bookworm]``, ``ubuntu:2x.04``, ``debian:bookworm``; Harbor's SWE-bench adapter
uses ``swebench/sweb.eval.x86_64.<instance>``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from envpipeline.models.base import Strict
from envpipeline.models.bundle import Bundle
from envpipeline.sandbox import dockerfile as df
from envpipeline.sandbox.base import BASE_IMAGE, EnvironmentBuildError
from envpipeline.terminal.import_report import Flag, Substitution

ResolutionKind = Literal["base", "substituted", "provided", "needs_image"]
#: Where an image came from in a bundle.
DOCKER_IMAGE_KEY = "task.toml [environment].docker_image"
_PYTHON_NOTE = (
    "Python 3.11 (Debian's /usr/bin/python3, `python` and pip from Debian) instead of {version}"
    " built in /usr/local; packages the image preinstalled come from the Dockerfile's own installs"
)


@dataclass(frozen=True)
class KnownImage:
    """One row of the table: a full-match pattern over the normalised image name and what it means."""

    pattern: re.Pattern[str]
    #: what differs on the base image (``{group}`` fields are filled from the pattern's named groups)
    note: str
    #: False: no local image stands in (the note says what the image carries)
    substitutable: bool = True

    def describe(self, match: re.Match[str]) -> str:
        """The note with the matched name's parts filled in."""
        return self.note.format(**match.groupdict(default=""))


def _known(pattern: str, note: str, substitutable: bool = True) -> KnownImage:
    return KnownImage(re.compile(pattern), note, substitutable)


#: First match wins, so the non-substitutable rows come first.
KNOWN_IMAGES: tuple[KnownImage, ...] = (
    _known(
        r"swebench/.*|.*sweb\.eval\..*",
        "a SWE-bench instance image: the repository at the task's commit with its pinned conda "
        "environment; the base image has neither",
        substitutable=False,
    ),
    _known(
        r"ghcr\.io/laude-institute/t-bench/deveval(:.*)?",
        "the Terminal-Bench DevEval toolchain image (compilers and runtimes of many languages)",
        substitutable=False,
    ),
    _known(r".*alpine.*", "an Alpine image (musl, apk): Debian binaries and apt do not stand in", False),
    _known(r"python:2(\..*)?", "Python 2: the base image has only Python 3", substitutable=False),
    _known(r"scratch", "an empty image: there is nothing to substitute", substitutable=False),
    _known(r"(nvidia/cuda|pytorch/pytorch|tensorflow/tensorflow)(:.*)?", "a GPU/ML toolchain image", False),
    _known(
        r"ghcr\.io/laude-institute/t-bench/python-3-13(:.*)?",
        "Terminal-Bench python-3-13 (python:3.13-slim-bookworm + tmux, asciinema, curl): "
        "Python 3.11 instead of 3.13, no asciinema",
    ),
    _known(
        r"ghcr\.io/laude-institute/t-bench/ubuntu-24-04(:.*)?",
        "Terminal-Bench ubuntu-24-04 (Ubuntu 24.04 + tmux, asciinema, python3): Debian 12 userland "
        "instead of Ubuntu 24.04, Python 3.11, no asciinema",
    ),
    _known(
        r"python:(?P<version>3(\.\d+){0,2})(-slim)?(-(bookworm|bullseye|buster|trixie))?",
        _PYTHON_NOTE,
    ),
    _known(r"python:(?P<version>latest|slim|bookworm|slim-bookworm)", _PYTHON_NOTE),
    _known(
        r"debian:(bookworm|12)(\.\d+)?(-slim)?|debian:stable(-slim)?",
        "the same Debian release (12, bookworm), minbase with python3, pytest, git and curl added",
    ),
    _known(
        r"debian:(?P<release>bullseye|buster|trixie|testing|latest|1[013])(\.\d+)?(-slim)?",
        "Debian 12 (bookworm) instead of Debian {release}",
    ),
    _known(
        r"ubuntu:(?P<release>\d\d\.\d\d|focal|jammy|noble|latest|rolling)",
        "Debian 12 userland instead of Ubuntu {release}: apt package names mostly match; Python 3.11",
    ),
)


class ImageResolution(Strict):
    """What one image name resolves to here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: Annotated[str, Field(description="the image as the bundle names it")]
    kind: Annotated[ResolutionKind, Field(description="base, substituted, provided or needs_image")]
    replacement: Annotated[str | None, Field(description="the image built FROM here (None: needs_image)")]
    note: Annotated[str, Field(description="what differs from the original, or what the image carries")]


def normalize(image: str) -> str:
    """The name as the table matches it: lower case, no digest, no Docker Hub prefixes."""
    name = image.strip().lower().split("@", 1)[0]
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        name = name.removeprefix(prefix)
    return name.removeprefix("library/")


def resolve_image(image: str, provided: Callable[[str], bool] | None = None) -> ImageResolution:
    """Resolve one image name (`provided`: whether the engine already has an image by that name)."""
    name = normalize(image)
    if name == BASE_IMAGE:
        return ImageResolution(image=image, kind="base", replacement=BASE_IMAGE, note="the base image itself")
    if provided is not None and provided(image):
        return ImageResolution(image=image, kind="provided", replacement=image, note="present in the engine")
    for known in KNOWN_IMAGES:
        match = known.pattern.fullmatch(name)
        if match is None:
            continue
        if known.substitutable:
            return ImageResolution(
                image=image, kind="substituted", replacement=BASE_IMAGE, note=known.describe(match)
            )
        return ImageResolution(image=image, kind="needs_image", replacement=None, note=known.describe(match))
    return ImageResolution(
        image=image,
        kind="needs_image",
        replacement=None,
        note="an image we have no local equivalent for (not in envpipeline.terminal.images.KNOWN_IMAGES)",
    )


class ImageUse(Strict):
    """One place a bundle names an image, and its resolution."""

    file: Annotated[str, Field(description="environment/Dockerfile or the task.toml key")]
    line: Annotated[int, Field(description="Dockerfile line (0 for task.toml)")]
    resolution: ImageResolution


class BundleImages(Strict):
    """Every image a bundle names and the Dockerfile text to build here."""

    uses: list[ImageUse] = []
    dockerfile_text: Annotated[
        str | None, Field(description="the Dockerfile to build with FROM lines resolved (None: as written)")
    ] = None

    def needs_image(self) -> list[ImageUse]:
        """The uses no local image stands in for."""
        return [u for u in self.uses if u.resolution.kind == "needs_image"]

    def substitutions(self) -> list[Substitution]:
        """The swaps made, as recorded in import reports, check output and verify results."""
        return [
            Substitution(
                file=u.file,
                line=u.line,
                original=u.resolution.image,
                replacement=u.resolution.replacement or "",
                reason=u.resolution.note,
            )
            for u in self.uses
            if u.resolution.kind == "substituted"
        ]

    def needs_image_flags(self) -> list[Flag]:
        """One ``needs_image`` flag per image that must be provided, with what to do."""
        return [
            Flag(name="needs_image", file=u.file, lines=[u.resolution.image], message=what_to_do(u))
            for u in self.needs_image()
        ]


def what_to_do(use: ImageUse) -> str:
    """Why an image cannot be substituted and how an operator provides it."""
    image = use.resolution.image
    return (
        f"{image} ({use.file}{f' line {use.line}' if use.line else ''}) is {use.resolution.note}; "
        f"it is not substituted and the bundle is not run. Provide it: `docker pull {image}` and "
        f"`docker save` it where a registry is reachable, then `docker load -i` it here (or build "
        f"it and `docker tag` it {image}), and verify with --sandbox docker; or rewrite FROM onto "
        f"{BASE_IMAGE} and install what the task needs"
    )


def _global_args(instructions: list[df.Instruction]) -> dict[str, str]:
    """ARG defaults declared before the first FROM (the only ones FROM may use)."""
    found: dict[str, str] = {}
    for step in instructions:
        if step.keyword != "ARG":
            break
        name, _, default = step.value.partition("=")
        found[name.strip()] = default.strip().strip("\"'")
    return found


def resolve_dockerfile(
    text: str, provided: Callable[[str], bool] | None = None
) -> tuple[str, list[ImageUse]]:
    """The Dockerfile with substituted FROM lines rewritten onto the base, and every image use.

    Stage names (``FROM build AS run``) are not images. A ``needs_image`` FROM is left as written.
    A Dockerfile that does not parse is returned unchanged with no uses: its build reports why.
    """
    try:
        instructions = df.parse_dockerfile(text)
    except EnvironmentBuildError:
        return text, []
    variables, stages = _global_args(instructions), set[str]()
    lines, uses = text.splitlines(), []
    for step in (s for s in instructions if s.keyword == "FROM"):
        words = [w for w in step.value.split() if not w.startswith("--")]
        if not words:
            continue
        image = df.expand(words[0], variables)
        alias = words[2] if len(words) >= 3 and words[1].upper() == "AS" else ""
        if normalize(image) not in stages:
            resolution = resolve_image(image, provided)
            uses.append(ImageUse(file="environment/Dockerfile", line=step.line, resolution=resolution))
            if resolution.kind == "substituted":
                _replace_instruction(
                    lines, step.line, f"FROM {BASE_IMAGE}" + (f" AS {alias}" if alias else "")
                )
        if alias:
            stages.add(alias.lower())
    return "\n".join(lines) + "\n", uses


def _replace_instruction(lines: list[str], line: int, replacement: str) -> None:
    """Put `replacement` on `line` (1-based), blanking its continuation lines so numbers stay."""
    index = line - 1
    while lines[index].rstrip().endswith("\\") and index + 1 < len(lines):
        lines[index] = ""
        index += 1
    lines[line - 1 : index + 1] = [replacement, *[""] * (index - line + 1)]


def resolve_bundle_images(bundle: Bundle, provided: Callable[[str], bool] | None = None) -> BundleImages:
    """Resolve the Dockerfile's FROM lines and ``[environment].docker_image`` of one bundle.

    With a Dockerfile, ``docker_image`` (Harbor's prebuilt copy of it) is recorded as a use only
    when it cannot be substituted (then the bundle needs that image). Without one, the bundle is
    built ``FROM`` the resolved ``docker_image``.
    """
    uses: list[ImageUse] = []
    text: str | None = None
    dockerfile = bundle.paths.dockerfile
    if dockerfile.is_file():
        written = dockerfile.read_text(errors="replace")
        resolved, uses = resolve_dockerfile(written, provided)
        text = resolved if resolved != written and resolved != written + "\n" else None
    image = bundle.config.environment.docker_image
    if image:
        resolution = resolve_image(image, provided)
        use = ImageUse(file=DOCKER_IMAGE_KEY, line=0, resolution=resolution)
        if not dockerfile.is_file():
            uses.append(use)
            text = f"FROM {resolution.replacement}\n" if resolution.replacement else None
        elif resolution.kind == "needs_image" and _known_unsubstitutable(image):
            uses.append(use)
    return BundleImages(uses=uses, dockerfile_text=text)


def _known_unsubstitutable(image: str) -> bool:
    """Whether the table names this image as one nothing local stands in for."""
    name = normalize(image)
    return any(not k.substitutable and k.pattern.fullmatch(name) for k in KNOWN_IMAGES)
