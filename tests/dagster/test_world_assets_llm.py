"""WildAWM in Dagster with generator 'llm': the LLM stages reach the assets through WorldsResource."""

import json
from pathlib import Path

from dagster import instance_for_test, materialize

from assets.worlds import persona_worlds, personas, world_checks_pass
from resources.llm import LLMResource
from resources.store import LakeResource
from resources.worlds import WorldsResource
from tests.llm_server import ScriptedLLMServer
from tests.worlds_llm_script import StageRouter


def test_llm_personas_skills_and_world_judge_through_the_resource(tmp_path):
    router = StageRouter().queue(
        "world_judge",
        json.dumps({"verdict": "pass", "issues": []}),
        json.dumps({"verdict": "fail", "issues": [{"app": "bank", "problem": "gym fee paid twice"}]}),
    )
    with ScriptedLLMServer(default=router) as server, instance_for_test() as instance:
        llm = LLMResource(model="openai/scripted", api_base=server.api_base, num_retries=0)
        worlds = WorldsResource(
            personas=1,
            days=1,
            live_health=False,
            llm=llm,
            generator="llm",
            llm_stages=["personas", "skills", "world_judge"],
            llm_skills=1,
        )
        resources = {"store": LakeResource(home=str(tmp_path)), "worlds": worlds}
        assert materialize([personas], instance=instance, resources=resources).success
        assert instance.get_dynamic_partitions("personas") == ["p01-ingrid-solberg"]
        result = materialize(
            [persona_worlds, world_checks_pass],
            instance=instance,
            resources=resources,
            partition_key="p01-ingrid-solberg",
        )
        assert result.success
        [check] = result.get_asset_check_evaluations()
        assert not check.passed  # the LLM world judge failed day 1
    assert dict(router.seen) == {"skills": 1, "persona": 1, "diversity_judge": 1, "world_judge": 2}
    assert json.loads((Path(tmp_path) / "worlds" / "llm-skills.json").read_text())[0]["name"] == "pay_gym_fee"
    days = resources["store"].lake().read("persona_worlds")
    judged = {r["day"]: g for r in days for g in json.loads(r["checks"]) if g["name"] == "llm_world_judge"}
    assert judged[0]["passed"] and not judged[1]["passed"] and "gym fee paid twice" in judged[1]["reason"]
    assert not any(g["name"] == "llm_reviewer" for r in days for g in json.loads(r["checks"]))
    ran = {r["day"]: r["skills"] for r in days}[1]
    assert "pay_gym_fee" in (json.loads(ran) if isinstance(ran, str) else ran)  # the admitted skill ran
