"""Build a persona's world day by day and verify every day.

Checks per day, each a recorded `GateResult`: `lint` (static lint of the delta), `replay` (two
more builds from scratch in temporary folders give identical hashes), `declaration` (declared apps
== apps the canonical-dump diff shows as touched), `live_health` (the interfaces helper's
`check_live`, or a recorded skip), `reviewer` (rule-based consistency) and `llm_reviewer` (only
when an `LLM` is passed).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from envpipeline.errors import LLMError
from envpipeline.llm import LLM
from envpipeline.models.gates import GateResult
from envpipeline.models.world import DaySnapshot, Persona, WorldBuild, WorldDelta
from envpipeline.scratch import scratch_folder
from envpipeline.worlds.delta import apply_delta, lint_delta
from envpipeline.worlds.genesis import create_day0
from envpipeline.worlds.planner import plan_day, plan_to_delta
from envpipeline.worlds.schema import RECORD_TIME_COLUMNS, day_end
from envpipeline.worlds.skills.base import Skill
from envpipeline.worlds.state import WorldReader, day_path, diff, touched_apps, world_hash, write_manifest


def materialize(
    persona: Persona, days: int, world_dir: Path, skills: dict[str, Skill] | None = None
) -> list[WorldDelta | None]:
    """Write day-00..day-D of `persona` under `world_dir` (replacing it); the deltas (None for day 0)."""
    world_dir = Path(world_dir)
    if world_dir.exists():
        shutil.rmtree(world_dir)
    world_dir.mkdir(parents=True)
    (world_dir / "persona.json").write_text(persona.model_dump_json(indent=2) + "\n", encoding="utf-8")
    create_day0(persona, day_path(world_dir, 0))
    write_manifest(day_path(world_dir, 0), persona.persona_id, 0)
    deltas: list[WorldDelta | None] = [None]
    for day in range(1, days + 1):
        reader = WorldReader(day_path(world_dir, day - 1))
        rng = random.Random(f"{persona.persona_id}:{day}:plan")
        plan = plan_day(persona, day, reader, rng, skills=skills)
        delta = plan_to_delta(persona, plan, reader, skills=skills)
        apply_delta(day_path(world_dir, day), delta)
        deltas.append(delta)
    return deltas


def build_world(
    persona: Persona,
    days: int,
    root: Path | str,
    *,
    llm: LLM | None = None,
    live_health: bool = True,
    replay: bool = True,
    skills: dict[str, Skill] | None = None,
) -> WorldBuild:
    """Materialize `<root>/<persona_id>/day-00..day-<days>` and run the checks of every day."""
    world_dir = Path(root) / persona.persona_id
    deltas = materialize(persona, days, world_dir, skills)
    hashes = [world_hash(day_path(world_dir, d)) for d in range(days + 1)]
    replays = _replay_hashes(persona, days, skills) if replay else None
    snapshots = []
    for day in range(days + 1):
        day_dir = day_path(world_dir, day)
        delta = deltas[day]
        checks = []
        declared: list[str] = []
        touched: list[str] = []
        if delta is None:
            checks.append(GateResult(name="lint", passed=True, reason="day 00 has no delta"))
            checks.append(GateResult(name="declaration", passed=True, reason="day 00 has no delta"))
        else:
            prev = day_path(world_dir, day - 1)
            problems = lint_delta(delta, WorldReader(prev))
            checks.append(
                GateResult(
                    name="lint",
                    passed=not problems,
                    reason="; ".join(problems) or f"{len(delta.ops)} ops clean",
                    evidence={"problems": problems},
                )
            )
            decl = check_declaration(prev, day_dir, delta)
            declared, touched = decl.evidence["declared"], decl.evidence["touched"]
            checks.append(decl)
        checks.append(_replay_check(day, hashes[day], replays))
        checks.append(check_live_health(day_dir, enabled=live_health))
        checks.append(review_rules(day_dir, day))
        if llm is not None:
            checks.append(review_llm(llm, persona, day_dir, delta))
        snapshots.append(
            DaySnapshot(
                day=day,
                hash=hashes[day],
                touched_apps=touched,
                declared_apps=declared,
                skills=[a.skill for a in delta.activities] if delta else [],
                checks=checks,
            )
        )
    return WorldBuild(persona_id=persona.persona_id, root=str(world_dir), days=snapshots)


def _replay_hashes(persona: Persona, days: int, skills: dict[str, Skill] | None) -> list[list[str]]:
    out = []
    for _ in range(2):
        with scratch_folder("wildawm-replay-") as tmp:
            world = Path(tmp) / persona.persona_id
            materialize(persona, days, world, skills)
            out.append([world_hash(day_path(world, d)) for d in range(days + 1)])
    return out


def _replay_check(day: int, main_hash: str, replays: list[list[str]] | None) -> GateResult:
    if replays is None:
        return GateResult(
            name="replay", passed=True, reason="skipped: replay disabled", evidence={"skipped": True}
        )
    a, b = replays[0][day], replays[1][day]
    ok = a == b == main_hash
    return GateResult(
        name="replay",
        passed=ok,
        reason="two builds from scratch give identical hashes" if ok else "replay hashes differ",
        evidence={"hash": main_hash, "replay_a": a, "replay_b": b},
    )


def check_declaration(previous_dir: Path, day_dir: Path, delta: WorldDelta) -> GateResult:
    """Declared apps (union over the day's activities) == apps the diff of canonical dumps touches."""
    declared = sorted({app for a in delta.activities for app in a.apps})
    touched = touched_apps(diff(previous_dir, day_dir))
    ok = declared == touched
    reason = (
        "declared apps match the touched apps"
        if ok
        else (
            f"declared but untouched: {sorted(set(declared) - set(touched))}; "
            f"touched but undeclared: {sorted(set(touched) - set(declared))}"
        )
    )
    return GateResult(
        name="declaration", passed=ok, reason=reason, evidence={"declared": declared, "touched": touched}
    )


def check_live_health(day_dir: Path, enabled: bool = True) -> GateResult:
    """The interfaces helper's live check (web app + MCP server start and answer), or a recorded skip."""
    if not enabled:
        return GateResult(
            name="live_health",
            passed=True,
            reason="skipped: disabled by the caller",
            evidence={"skipped": True},
        )
    try:
        from envpipeline.worlds.interfaces.health import check_live
    except ImportError:
        return GateResult(
            name="live_health",
            passed=True,
            reason="skipped: interfaces not available",
            evidence={"skipped": True},
        )
    try:
        return check_live(day_dir)
    except Exception as exc:  # a crashing health check is a failed check, not a crashed build
        return GateResult(name="live_health", passed=False, reason=f"check_live raised {exc!r}")


def review_rules(day_dir: Path, day: int) -> GateResult:
    """Rule-based reviewer: referential integrity, balances, stock, statuses, timestamps, bookings."""
    r = WorldReader(day_dir)
    issues: list[str] = []
    products = {p["id"]: p for p in r.query("shop", "SELECT * FROM products")}
    for item in r.query("shop", "SELECT * FROM cart_items"):
        if item["product_id"] not in products:
            issues.append(f"orphan cart item {item['id']}")
    issues += [f"negative stock for {p['sku']}" for p in products.values() if p["stock"] < 0]
    for order in r.query("shop", "SELECT * FROM orders"):
        items = json.loads(order["items_json"])
        if any(i["product_id"] not in products for i in items):
            issues.append(f"order {order['order_number']} references a missing product")
        if sum(i["quantity"] * i["price_cents"] for i in items) != order["total_cents"]:
            issues.append(f"order {order['order_number']} total does not match its items")
    for acc in r.query(
        "bank",
        "SELECT a.*, COALESCE(SUM(t.amount_cents), 0) AS total FROM accounts a "
        "LEFT JOIN transactions t ON t.account_id = a.id GROUP BY a.id",
    ):
        if acc["balance_cents"] != acc["total"]:
            issues.append(
                f"bank account {acc['name']} balance {acc['balance_cents']} != transactions {acc['total']}"
            )
    channels = {c["id"] for c in r.query("chat", "SELECT id FROM channels")}
    issues += [
        f"chat message {m['id']} in a missing channel"
        for m in r.query("chat", "SELECT * FROM messages")
        if m["channel_id"] not in channels
    ]
    issues += [
        f"mail {m['id']} in folder {m['folder']!r}"
        for m in r.query(
            "mail", "SELECT id, folder FROM messages WHERE folder NOT IN ('inbox', 'sent', 'archive')"
        )
    ]
    issues += [
        f"dm {m['id']} direction {m['direction']!r}"
        for m in r.query("dm", "SELECT id, direction FROM messages WHERE direction NOT IN ('in', 'out')")
    ]
    issues += [
        f"event {e['id']} ends before it starts"
        for e in r.query("calendar", "SELECT * FROM events")
        if e["end"] < e["start"]
    ]
    for (app, table), col in RECORD_TIME_COLUMNS.items():
        late = r.query(app, f'SELECT id FROM "{table}" WHERE "{col}" > ?', [day_end(day)])
        issues += [f"{app}/{table} {row['id']} {col} lies in the future" for row in late]
    for booking in r.query("flights", "SELECT * FROM bookings"):
        events = r.query(
            "calendar", "SELECT id FROM events WHERE title LIKE ?", [f"Flight %({booking['confirmation']})"]
        )
        if booking["status"] == "confirmed" and not events:
            issues.append(f"confirmed booking {booking['confirmation']} has no calendar event")
        if booking["status"] == "cancelled" and events:
            issues.append(f"cancelled booking {booking['confirmation']} still has a calendar event")
    bad_hash = r.query("accounts", "SELECT id FROM users WHERE length(password_hash) != 64")
    issues += [f"user {u['id']} password hash is not a sha256 hex" for u in bad_hash]
    return GateResult(
        name="reviewer",
        passed=not issues,
        reason="; ".join(issues) or "rule-based review found no inconsistency",
        evidence={"issues": issues},
    )


def review_llm(llm: LLM, persona: Persona, day_dir: Path, delta: WorldDelta | None) -> GateResult:
    """An LLM reviewer through the shared client: JSON {"ok": bool, "issues": [...]}.

    An endpoint failure is recorded as a skip (the rule-based reviewer still decides)."""
    activities = [a.model_dump() for a in delta.activities] if delta else []
    manifest = json.loads((Path(day_dir) / "manifest.json").read_text())
    prompt = (
        "You review one day of a synthetic personal-computer world for consistency.\n"
        f"Persona: {persona.description}\nActivities: {json.dumps(activities)}\n"
        f"Row counts: {json.dumps(manifest['apps'])}\nOps: "
        f"{json.dumps([o.model_dump(exclude_none=True) for o in delta.ops])[:6000] if delta else '[]'}\n"
        'Answer with JSON only: {"ok": true|false, "issues": ["..."]}'
    )
    try:
        response = llm.complete([{"role": "user", "content": prompt}])
    except LLMError as exc:
        return GateResult(
            name="llm_reviewer", passed=True, reason=f"skipped: LLM error {exc}", evidence={"skipped": True}
        )
    text = (response.content or "").strip()
    try:
        start, end = text.index("{"), text.rindex("}") + 1
        verdict = json.loads(text[start:end])
        ok, issues = bool(verdict.get("ok")), [str(i) for i in verdict.get("issues", [])]
    except (ValueError, AttributeError):
        return GateResult(
            name="llm_reviewer", passed=False, reason="unparseable LLM review", evidence={"raw": text[:500]}
        )
    return GateResult(
        name="llm_reviewer",
        passed=ok,
        reason="; ".join(issues) or "LLM reviewer found no issue",
        evidence={"issues": issues, "cached": getattr(response, "cached", False)},
    )
