"""The LLM paths of WildAWM: personas with the diversity judge, event skills, tasks and the world judge.

Every stage asks through the shared `envpipeline.llm` client (litellm, disk cache, usage),
validates the answer with pydantic and the stage's own checks, repairs a refused answer a bounded
number of times, and hands what it produced to the same execution-based gates as the procedural
path. `run.build_and_gate_llm` runs them end to end (`envpipeline worlds build --generator llm`).
"""
