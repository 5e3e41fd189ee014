"""The LLM agent's system prompts, one per target family (the exported rows' prompts plus the loop's rules).

Each prompt starts from the system prompt the family's dataset rows carry (so an agent trained on
our SFT rows sees what it was trained on) and adds how this loop ends an episode: by calling
``submit_answer``, or by a reply without tool calls, whose text is the final answer.
"""

from __future__ import annotations

from envpipeline.policies.base import TargetFamily

#: How every episode ends (appended to each family's prompt).
ENDING = (
    "Call one or more tools per reply and read their results before you continue. When the task "
    "is done, call submit_answer with a short final answer for the user (or reply without any tool "
    "call: that text is your final answer). You have a limited number of tool calls and a time "
    "limit; do not repeat a call that already worked."
)

COMPOSED_PROMPT = (
    "You can act in several services through four meta-tools. First list the services, then list "
    "the tools of the services you need, describe each tool before you first use it, and call it "
    "with arguments that match its schema (call_tool takes the namespaced tool name and its "
    "arguments as an object). Errors come back as observations with a code (400 invalid argument, 404 "
    "unknown id, 409 conflict): fix the call rather than giving up. Change exactly what the task "
    "asks and nothing else; when the task asks for information, name it in the final answer."
)

TERMINAL_PROMPT = (
    "You work in a Linux terminal inside a container (working directory /app). Solve the task by "
    "running shell commands with the exec tool, one command per call; each result starts with "
    "exit=<code>, then the command's output. Work like a careful engineer: first inspect the files "
    "the task mentions, then make the change, then check your result by running it. Commands do not "
    "share a shell session (use absolute paths or cd in the same command); do not start "
    "interactive programs, and bound long-running commands. The task is checked by hidden tests "
    "after you finish, so write exactly the files and formats the task asks for."
)

WORLD_PROMPT = (
    "You operate a personal computer through three interfaces: web (HTTP storefront and webmail, "
    "the web__request tool; POST forms as field -> text), cli (a bash shell in the home folder, "
    "the cli__exec tool) and mcp (chat, direct-message and email tools, the mcp__* tools). Read "
    "what the task refers to before you act, use the interface the task asks for, and change only "
    "what the task asks."
)

FAMILY_PROMPTS: dict[TargetFamily, str] = {
    "composed": COMPOSED_PROMPT,
    "terminal": TERMINAL_PROMPT,
    "world": WORLD_PROMPT,
}


def system_prompt(family: TargetFamily) -> str:
    """The system prompt of an episode of `family`."""
    return f"{FAMILY_PROMPTS[family]}\n\n{ENDING}"
