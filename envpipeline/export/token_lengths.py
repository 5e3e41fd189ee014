"""Token-length estimates of exported rows, and the trainer length settings they call for.

No tokenizer is downloaded: a token count is *estimated* as the larger of two documented proxies,

* the number of GPT-2-style pre-tokenization pieces (letters runs, 1-3 digit runs, punctuation runs,
  whitespace — the split Llama 3 and Qwen 2.5 tokenizers make before BPE; every piece becomes at
  least one token, so this is a lower bound), and
* characters / 3 (BPE tokenizers average 3-4 characters per token on English; JSON-heavy tool
  traffic is nearer 3),

and a conversation is measured as ChatML text (``<|im_start|>role\\n...<|im_end|>``, tools as JSON in
the first message, tool calls as JSON) — the shape Qwen-family templates render. A setting is the
largest estimate plus 10% headroom, rounded up to a multiple of 512: check it once with the real
tokenizer of the model you train (``len(tokenizer.apply_chat_template(messages, tools=tools))``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

PRE_TOKENS = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d{1,3}| ?[^\s\w]+|\s+(?!\S)|\s+""")
CHARS_PER_TOKEN = 3
HEADROOM = 1.1
ROUND_TO = 512


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: max(pre-tokenization pieces, characters / 3) (module docstring)."""
    return max(len(PRE_TOKENS.findall(text)), math.ceil(len(text) / CHARS_PER_TOKEN))


def _message_text(message: dict[str, Any]) -> str:
    parts = [str(message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        function = call.get("function", call)
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            arguments = json.loads(arguments) if arguments.strip() else {}
        parts.append(json.dumps({"name": function.get("name"), "arguments": arguments}, ensure_ascii=False))
    return f"<|im_start|>{message.get('role', '')}\n" + "\n".join(p for p in parts if p) + "<|im_end|>\n"


def chat_text(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> str:
    """A conversation as ChatML text, tool schemas as JSON lines before the first message."""
    header = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tools)
    return header + "".join(_message_text(m) for m in messages)


def length_setting(estimates: Sequence[int]) -> int:
    """The largest estimate plus 10% headroom, rounded up to a multiple of 512 (0 for none)."""
    if not estimates:
        return 0
    return math.ceil(max(estimates) * HEADROOM / ROUND_TO) * ROUND_TO


def percentile(values: Sequence[int], share: float) -> int:
    """The nearest-rank percentile (`share` in 0..1) of non-empty `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]
