"""Resources wrap the core configs without drifting from them, and deployments pick backends."""

import pytest

from envpipeline.compose.author import ComposeConfig
from envpipeline.errors import ConfigError
from envpipeline.llm.client import LLMConfig
from resources.composer import ComposerResource
from resources.deployments import Deployment, deployment_resources
from resources.llm import LLMResource

WRAPPED = [(ComposerResource, ComposeConfig), (LLMResource, LLMConfig)]


@pytest.mark.parametrize(("resource", "core"), WRAPPED, ids=lambda c: c.__name__)
def test_a_wrapping_resource_mirrors_its_core_fields(resource, core):
    shared = set(resource.model_fields) & set(core.model_fields)
    assert shared, f"{resource.__name__} exposes none of {core.__name__}'s fields"
    for name in shared:
        ours, theirs = resource.model_fields[name], core.model_fields[name]
        assert ours.description == theirs.description, name
        if not theirs.is_required():
            assert ours.default == theirs.default, name


def test_the_composer_resource_builds_the_core_config_and_the_core_validates_it():
    assert ComposerResource(services=4, walk_length=7).config() == ComposeConfig(services=4, walk_length=7)
    with pytest.raises(ValueError):
        ComposerResource(services=1).config()  # the core's ge=2 applies


def test_llm_resource_config_round_trips():
    config = LLMResource(model="openai/m", api_base="http://127.0.0.1:1/v1", max_tokens=5).llm_config()
    assert config == LLMConfig(model="openai/m", api_base="http://127.0.0.1:1/v1", max_tokens=5)


def test_deployments_choose_the_sandbox_and_the_data_folder(tmp_path):
    local = deployment_resources("local", tmp_path)
    assert local["store"].home == str(tmp_path) and local["sandbox"].backend == ""
    assert deployment_resources(Deployment.DOCKER, tmp_path)["sandbox"].backend == "docker"
    assert deployment_resources("cluster", tmp_path)["sandbox"].backend == "docker"


def test_a_cluster_needs_an_explicit_data_folder_and_unknown_deployments_are_refused():
    with pytest.raises(ConfigError, match="ENVPIPELINE_HOME"):
        deployment_resources("cluster", None)
    with pytest.raises(ConfigError, match="known: local, docker, cluster"):
        deployment_resources("laptop", None)


def test_sandbox_backends_are_an_enum_and_unknown_ones_are_refused():
    import pytest
    from pydantic import ValidationError

    from envpipeline.sandbox.detect import SandboxBackend
    from resources.sandbox import SandboxResource

    assert SandboxResource(backend="local").backend is SandboxBackend.LOCAL
    assert SandboxResource().backend is SandboxBackend.AUTO
    with pytest.raises(ValidationError):
        SandboxResource(backend="podman")


def test_the_composer_resource_chooses_the_llm_paths_only_with_an_llm():
    from envpipeline.compose.llm_author import AuthorConfig
    from envpipeline.services.llm_worldmodel import WorldModelConfig

    assert ComposerResource().world_model_config() == WorldModelConfig()
    assert ComposerResource().author_config() == AuthorConfig()
    llm = LLMResource(model="openai/m", api_base="http://127.0.0.1:1/v1", cache_dir="/tmp/c")
    composer = ComposerResource(world_model="llm", author="llm", probe_tries=3, llm=llm)
    assert composer.world_model_config().model == "openai/m"
    assert str(composer.world_model_config().cache_dir) == "/tmp/c/world-model"
    assert (composer.author_config().kind, composer.author_config().probe_tries) == ("llm", 3)
    with pytest.raises(ConfigError, match="needs the composer's `llm`"):
        ComposerResource(author="llm").author_config()
    with pytest.raises(ValueError):
        ComposerResource(world_model="oracle", llm=llm).world_model_config()
