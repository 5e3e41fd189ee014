"""config-editing: apply a change list to an INI file (and a JSON file) without losing comments.

The agent applies `set`/`delete`/`json` operations from ``/app/changes.txt`` to
``/app/config/service.ini`` (and ``/app/config/features.json`` from depth 2), keeping every comment
line, rejecting changes that break the validation rules. Every instance sets existing keys, deletes
one and creates a new section. Its edge cases, each present with the knob-set probability: a key
name that occurs in two sections and is set in one (``replaces_globally``; without it no key name
repeats across sections and every new key is a name used nowhere), comment lines
(``drops_comments``; without them the file has none), sets that add a key to an existing section
(``skips_missing_keys``; without them every set names an existing key or creates the new section
with its only key, and a deleted key is never set again) and invalid values (``no_validation``;
without them every set is valid).
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from envpipeline.terminal.families._script_kit import python_program, test_script
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    Knobs,
    TaskFamily,
    TaskParts,
    knob,
)
from envpipeline.terminal.families.registry import register_family

SECTIONS = [
    "server",
    "database",
    "cache",
    "logging",
    "auth",
    "metrics",
    "storage",
    "queue",
    "mail",
    "scheduler",
]
KEYS = [
    "host",
    "timeout",
    "enabled",
    "retries",
    "path",
    "level",
    "user",
    "pool_size",
    "interval",
    "ttl",
    "mode",
]
#: key names of sections whose keys are unique (no key repeats across sections)
EXTRA_KEYS = [
    "workers",
    "prefix",
    "format",
    "owner",
    "backoff",
    "limit",
    "region",
    "label",
    "threads",
    "charset",
    "url",
    "size",
    "queue_depth",
    "flush",
]
#: the validated keys (see the instruction)
RULES = ("port", "enabled", "timeout")
TRICKY = ["postgres://app@db:5432/main?sslmode=require", "a=b;c#d", "--flag=1 --other=2", "x == y"]


class ConfigEditingKnobs(Knobs):
    sections: int = knob(4, 3, 8, "breadth", "sections in the INI file")
    changes: int = knob(6, 5, 16, "breadth", "operations in changes.txt")
    depth: int = knob(
        1,
        1,
        3,
        "depth",
        "1: INI only; 2: + nested JSON edits, more rules; 3: + irregular spacing, values with = ; #",
    )


def _value(rng, key: str) -> str:
    """A valid value for a key name."""
    if key == "port":
        return str(rng.randint(1024, 65000))
    if key == "enabled":
        return rng.choice(["true", "false"])
    if key in ("timeout", "retries", "pool_size", "interval", "ttl"):
        return str(rng.randint(1, 600))
    return rng.choice(
        [
            "alpha",
            "beta",
            "/var/lib/app",
            "info",
            "warn",
            "svc_user",
            "fast",
            f"10.0.0.{rng.randint(2, 250)}",
        ]
    )


SOLVER = r"""
import configparser, json, re

RULES = {"port": lambda v: v.isdigit() and 1 <= int(v) <= 65535,
         "enabled": lambda v: v in ("true", "false"),
         "timeout": lambda v: v.isdigit() and int(v) > 0}
KEY = re.compile(r"^\s*([^=#;\[\s][^=]*?)\s*=\s*(.*)$")
lines = open("config/service.ini").read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
rejected, json_ops = [], []


def section_bounds(name):
    start = None
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("[") and s.endswith("]"):
            if start is not None:
                return start, i
            if s[1:-1].strip() == name:
                start = i
    return (start, len(lines)) if start is not None else (None, None)


def find_key(name, key):
    start, end = section_bounds(name)
    if start is None:
        return None, None
    for i in range(start + 1, end):
        m = KEY.match(lines[i])
        if m and not lines[i].lstrip().startswith(("#", ";")) and m.group(1) == key:
            return i, (start, end)
    return None, (start, end)


def set_key(name, key, value):
    if "replaces_globally" in MISSED:
        hits = [i for i, l in enumerate(lines) if (m := KEY.match(l)) and m.group(1) == key]
        if hits:
            for i in hits:
                lines[i] = f"{key} = {value}"
            return
    idx, bounds = find_key(name, key)
    if idx is not None:
        lines[idx] = f"{key} = {value}"
    elif bounds is None:
        if lines and lines[-1].strip():
            lines.append("")
        lines.extend([f"[{name}]", f"{key} = {value}"])
    elif "skips_missing_keys" not in MISSED:
        start, end = bounds
        last = start
        for i in range(start + 1, end):
            if KEY.match(lines[i]) and not lines[i].lstrip().startswith(("#", ";")):
                last = i
        lines.insert(last + 1, f"{key} = {value}")


for raw in open("changes.txt").read().splitlines():
    if not raw.strip():
        continue
    verb, rest = raw.split(" ", 1)
    if verb == "json":
        path, value = rest.split(" = ", 1)
        json_ops.append((path.split("."), json.loads(value)))
        continue
    if verb == "delete":
        name, key = rest.strip().split(".", 1)
        idx, _ = find_key(name, key)
        if idx is not None:
            del lines[idx]
        continue
    target, value = rest.split(" = ", 1)
    name, key = target.split(".", 1)
    check = RULES.get(key)
    if check and not check(value) and "no_validation" not in MISSED:
        rejected.append(raw)
        continue
    set_key(name, key, value)

if "drops_comments" in MISSED:
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read_string("\n".join(lines) + "\n")
    with open("config/service.ini", "w") as fh:
        cp.write(fh)
else:
    open("config/service.ini", "w").write("\n".join(lines) + "\n")
open("config/rejected.txt", "w").write("".join(r + "\n" for r in rejected))
if json_ops:
    doc = json.load(open("config/features.json"))
    for path, value in json_ops:
        node = doc
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    json.dump(doc, open("config/features.json", "w"), indent=2)
"""

TEST_BODY = r"""
import configparser
text = read("/app/config/service.ini")
cp = configparser.ConfigParser(interpolation=None, comment_prefixes=("#", ";"), delimiters=("=",), strict=True)
cp.optionxform = str
cp.read_string(text)
check("section order", cp.sections() == [s for s, _ in EXPECTED["ini"]])
for name, pairs in EXPECTED["ini"]:
    got = list(cp[name].items()) if cp.has_section(name) else None
    check(f"section [{name}] keys, order and values", got == [tuple(p) for p in pairs])
comments = [l.strip() for l in text.splitlines() if l.strip().startswith(("#", ";"))]
check("every comment line kept, in order", comments == EXPECTED["comments"])
rejected = [l for l in read("/app/config/rejected.txt").splitlines() if l.strip()]
check("rejected.txt lists the invalid changes", rejected == EXPECTED["rejected"])
if EXPECTED["json"] is not None:
    check("features.json content", json.loads(read("/app/config/features.json")) == EXPECTED["json"])
"""


class ConfigEditingFamily(TaskFamily[ConfigEditingKnobs]):
    """Rule-driven edits of INI/JSON config files that keep comments and validate values."""

    name = "config-editing"
    category = "system-administration"
    description = (
        "Apply a change list to INI and JSON config files, keeping comments and rejecting invalid values."
    )
    skills = ["config-formats", "text-parsing", "validation", "json"]
    knob_model = ConfigEditingKnobs
    presets = {
        "easy": {"sections": 3, "changes": 5, "depth": 1},
        "medium": {"sections": 5, "changes": 8, "depth": 2},
        "hard": {"sections": 7, "changes": 12, "depth": 3},
    }
    variants = ("replaces_globally", "drops_comments", "skips_missing_keys", "no_validation")
    edge_case_axes = {
        "replaces_globally": "depth",
        "drops_comments": "breadth",
        "skips_missing_keys": "breadth",
        "no_validation": "depth",
    }

    def build(
        self, rng: random.Random, knobs: ConfigEditingKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        names = rng.sample(SECTIONS, knobs.sections + 1)
        names, new_section = names[:-1], names[-1]
        shared = "replaces_globally" in edge_cases  # key names may repeat across sections
        model: dict[str, list[list[str]]] = {}
        for i, name in enumerate(names):
            if shared:
                keys = rng.sample(KEYS, rng.randint(2, 4))
            else:  # every key in one section only, leaving at least 4 names unused for new keys
                free = [k for k in KEYS + EXTRA_KEYS if k not in {p[0] for v in model.values() for p in v}]
                keys = rng.sample(free, min(rng.randint(2, 4), (len(free) - 4) // (len(names) - i)))
            model[name] = [[k, _value(rng, k)] for k in keys]
        dup_a, dup_b = rng.sample(names, 2)
        for name in (dup_a, dup_b) if shared else (dup_a,):
            model[name].insert(rng.randint(0, len(model[name])), ["port", _value(rng, "port")])
        used = {p[0] for pairs in model.values() for p in pairs}
        # Render the file: comments use both prefixes; depth 3 uses irregular spacing.
        commented = "drops_comments" in edge_cases
        comments = []
        if commented:
            comments = [
                f"# {rng.choice(['billing', 'gateway', 'ingest'])} service configuration",
                "; managed by ops",
            ]
        out = [*comments, ""] if commented else []
        for i, name in enumerate(names):
            if commented:
                c = f"{'#;'[i % 2]} --- {name} settings ---"
                out.append(c)
                comments.append(c)
            out.append(f"[{name}]")
            for j, (k, v) in enumerate(model[name]):
                if commented and j == 1 and rng.random() < 0.6:
                    note = f"# note: {k} reviewed {rng.randint(2019, 2024)}"
                    out.append(note)
                    comments.append(note)
                sep = rng.choice(["=", " =  ", "   = "]) if knobs.depth >= 3 else " = "
                out.append(f"{k}{sep}{v}")
            out.append("")
        ini_text = "\n".join(out)
        # Operations: a set of a key that exists in the named section only ...
        ops: list[str] = [f"set {dup_a}.port = {_value(rng, 'port')}"]
        adds = "skips_missing_keys" in edge_cases  # sets that add a key to an existing section
        target = rng.choice(names)
        if adds:
            missing = [k for k in KEYS if k not in {p[0] for p in model[target]} | {"enabled", "timeout"}]
            new_key = rng.choice(missing if shared else [k for k in missing + EXTRA_KEYS if k not in used])
            ops.append(f"set {target}.{new_key} = {_value(rng, new_key)}")
            used.add(new_key)
        # ... a new section (its second key is added to an existing section) ...
        fresh = ["enabled", "path", "mode", "interval"]
        if not shared:
            fresh = [k for k in fresh + EXTRA_KEYS if k not in used]
        new_keys = rng.sample(fresh, 2 if adds else 1)
        ops += [f"set {new_section}.{k} = {_value(rng, k)}" for k in new_keys]
        plain = [n for n in names if n not in (dup_a,)]
        victim = rng.choice(plain)
        gone = rng.choice([p[0] for p in model[victim] if p[0] != "port"])
        ops.append(f"delete {victim}.{gone}")
        if "no_validation" in edge_cases:
            bad_port = rng.choice(["70000", "80a", "0"])
            ops.append(f"set {dup_b}.port = {bad_port}")
            if knobs.depth >= 2:
                ops.append(f"set {rng.choice(names)}.enabled = {rng.choice(['yes', 'on', 'TRUE'])}")
                ops.append(f"set {rng.choice(names)}.timeout = {rng.choice(['-5', '0', '30s'])}")
        # Sets of existing keys (never the deleted one: setting it again would add it back).
        settable = [(n, p[0]) for n in names for p in model[n] if (n, p[0]) != (victim, gone)]
        if knobs.depth >= 3:
            if adds:
                ops.append(f"set {rng.choice(names)}.dsn = {rng.choice(TRICKY)}")
                ops.append(f"set {new_section}.args = {rng.choice(TRICKY)}")
            else:
                name, key = rng.choice([(n, k) for n, k in settable if k not in RULES])
                ops.append(f"set {name}.{key} = {rng.choice(TRICKY)}")
        while len(ops) < knobs.changes:
            name, key = rng.choice(settable)
            ops.append(f"set {name}.{key} = {_value(rng, key)}")
        rng.shuffle(ops)
        # The JSON file (depth >= 2).
        features = None
        if knobs.depth >= 2:
            features = {
                "features": {
                    f: rng.choice([True, False]) for f in rng.sample(["beta", "search", "export", "sso"], 3)
                },
                "limits": {"rpm": rng.randint(50, 500), "burst": {"size": rng.randint(5, 50)}},
                "owners": rng.sample(["ana", "bo", "cy", "dee"], 2),
            }
            jops = [
                f"json features.{next(iter(features['features']))} = {rng.choice(['true', 'false'])}",
                f"json limits.burst.window = {rng.randint(1, 60)}",
                f'json alerts.pager.{rng.choice(["team", "route"])} = "{rng.choice(["core", "edge"])}"',
                f'json owners = ["{rng.choice(["eve", "fay"])}"]',
            ]
            for op in jops[: 2 + knobs.depth - 1]:
                ops.insert(rng.randint(0, len(ops)), op)
        expected = _expected_state(model, names, ops, features)
        expected["comments"] = comments
        changes_text = "\n".join(ops) + "\n"
        env = {
            "Dockerfile": STANDARD_DOCKERFILE,
            "app/config/service.ini": ini_text,
            "app/changes.txt": changes_text,
        }
        if features is not None:
            env["app/config/features.json"] = json.dumps(features, indent=2) + "\n"
        json_rule = (
            "- `json <dotted.path> = <JSON literal>`: set the value at that path in `/app/config/features.json`, "
            "creating missing intermediate objects; keep it valid JSON.\n"
            if features is not None
            else ""
        )
        instruction = f"""# Apply configuration changes

`/app/changes.txt` lists changes, one per line, to apply **in order** to `/app/config/service.ini`:

- `set <section>.<key> = <value>`: the path and the value are separated by the first ` = `; the value is
  everything after it (it may contain `=`, `;` or `#`). If the key exists in that section, replace its
  value in place; key names can repeat across sections, so change only the named section. If the section
  exists but lacks the key, add `key = value` after the section's last key. If the section does not exist,
  append it at the end of the file.
- `delete <section>.<key>`: remove that key line.
{json_rule}
Validation: a `set` whose key is `port` must have an integer value 1-65535, `enabled` must be exactly
`true` or `false`, `timeout` must be a positive integer. Skip every `set` that breaks a rule and list
its original line, in order, in `/app/config/rejected.txt` (empty file if none).

Keep every comment line (lines starting with `#` or `;`) unchanged and in its original order, keep the
order of sections and keys, and write changed or added keys as `key = value`. The result must parse as
INI with `=` as delimiter and no duplicate keys.
"""
        return TaskParts(
            instruction=instruction,
            environment=env,
            tests={"test.sh": STANDARD_TEST_SH, "test_outputs.py": test_script(expected, TEST_BODY)},
            solver=python_program(SOLVER),
        )


def _expected_state(
    model: dict[str, list[list[str]]], names: list[str], ops: list[str], features: dict[str, Any] | None
) -> dict[str, Any]:
    """The expected final state: ordered sections with key/value pairs, rejected lines, JSON."""
    rules = {
        "port": lambda v: v.isdigit() and 1 <= int(v) <= 65535,
        "enabled": lambda v: v in ("true", "false"),
        "timeout": lambda v: v.isdigit() and int(v) > 0,
    }
    ini = {n: [list(p) for p in model[n]] for n in names}
    order = list(names)
    doc = copy.deepcopy(features)
    rejected = []
    for raw in ops:
        verb, rest = raw.split(" ", 1)
        if verb == "json":
            if doc is None:
                raise ValueError(f"{raw!r}: a JSON change needs the JSON document (depth >= 2)")
            path, value = rest.split(" = ", 1)
            parts = path.split(".")
            node: dict[str, Any] = doc
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = json.loads(value)
        elif verb == "delete":
            name, key = rest.split(".", 1)
            ini[name] = [p for p in ini[name] if p[0] != key]
        else:
            target, value = rest.split(" = ", 1)
            name, key = target.split(".", 1)
            if key in rules and not rules[key](value):
                rejected.append(raw)
                continue
            if name not in ini:
                ini[name] = []
                order.append(name)
            for pair in ini[name]:
                if pair[0] == key:
                    pair[1] = value
                    break
            else:
                ini[name].append([key, value])
    return {"ini": [[n, ini[n]] for n in order], "rejected": rejected, "json": doc}


register_family(ConfigEditingFamily())
